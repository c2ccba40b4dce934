/**
 * Smoke entry for the compiled binary: loads a local model and prints one vector as JSON.
 * Proves that onnxruntime-node, its native library and the encoder worker all work from
 * `bun build --compile` output (see scripts/build-binary.ts).
 *
 * Usage: embed-smoke <modelsDir> [model] [text] [pins]
 * (`pins` `off` skips the pinned hashes, for a stand-in model such as the tests' tiny one.)
 */
import { createLocalEmbedder } from "../src/search/embedders/local/index.ts";

const [modelsDir, model = "all-MiniLM-L6-v2", text = "hello world", pins = "on"] = process.argv.slice(2);
if (!modelsDir) {
  process.stderr.write("usage: embed-smoke <modelsDir> [model] [text]\n");
  process.exit(2);
}
const embedder = createLocalEmbedder({
  modelsDir,
  model,
  autoDownload: false,
  pins: pins !== "off",
  log: (line) => process.stderr.write(`${line}\n`),
});
try {
  const [vector] = await embedder.embed([text], "document");
  process.stdout.write(
    `${JSON.stringify({ spaceId: embedder.spaceId, ...embedder.status(), vector: Array.from(vector) })}\n`,
  );
} catch (error) {
  process.stderr.write(`embed-smoke: ${(error as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await embedder.close();
}
