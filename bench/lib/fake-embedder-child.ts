/**
 * Runs the tests' fake OpenAI-compatible embedder (a real HTTP server on 127.0.0.1) in
 * its own process, so its CPU and memory are not counted as the server's.
 */
import { startFakeEmbedder } from "../../test/helpers/fake-embedder";

const dimension = Number(process.env.MNEMO_BENCH_DIMENSION ?? 384);
const fake = startFakeEmbedder(dimension);
const parent = process.ppid;
setInterval(() => {
  // The helper keeps every request for tests' assertions; a bench does not need them.
  fake.requests.length = 0;
  try {
    process.kill(parent, 0);
  } catch {
    process.exit(1);
  }
}, 1_000);
process.on("message", (message) => {
  if ((message as { op?: string }).op === "stop") {
    fake.stop();
    process.exit(0);
  }
});
process.send!({ type: "ready", url: fake.url, pid: process.pid });
