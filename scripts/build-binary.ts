/**
 * Builds a standalone binary with `bun build --compile` that can run the local embedding
 * model. Two things the plain CLI flags would miss:
 * - the encoder worker is an extra entrypoint (Bun bundles workers only when listed), and
 *   the build root is the repo root so the worker sits at `/$bunfs/root/<ENCODER_WORKER_ENTRY>`;
 * - libonnxruntime is embedded by src/search/embedders/local/ort-loader.ts itself (a file
 *   import), so nothing else is needed here for it.
 * Minification is syntax only by default. Full `--minify` renames identifiers Elysia reads;
 * and measured on 2026-11-21, `--minify-whitespace` too broke the server binary (the auth
 * plugin's `transform({ headers })` received no headers: Elysia infers from a hook's source
 * text what to parse). `--minify-whitespace` turns it back on for entries without Elysia.
 *
 * Usage: bun scripts/build-binary.ts [--entry cli/mnemo.ts] [--outfile dist/mnemo]
 *          [--target bun-linux-x64] [--minify-whitespace]
 */
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ENCODER_WORKER_ENTRY } from "../src/search/embedders/local/index.ts";

const repoRoot = resolve(import.meta.dir, "..");

/** Options of {@link buildBinary}. */
export interface BuildBinaryOptions {
  /** Main entrypoint, relative to the repo root. */
  entry: string;
  /** Where to write the executable. */
  outfile: string;
  /** Cross-compile target such as `bun-linux-arm64`; default: this machine. */
  target?: Bun.Build.CompileTarget;
  /** Also strip whitespace (breaks Elysia's hook inference, see above); default false. */
  minifyWhitespace?: boolean;
}

/**
 * Compiles `entry` (plus the encoder worker) into one executable.
 *
 * @throws Error with the bundler's messages when the build fails.
 * @example
 * await buildBinary({ entry: "scripts/embed-smoke.ts", outfile: "/tmp/embed-smoke" });
 */
export async function buildBinary(options: BuildBinaryOptions): Promise<{ outfile: string; bytes: number }> {
  const result = await Bun.build({
    entrypoints: [join(repoRoot, options.entry), join(repoRoot, ENCODER_WORKER_ENTRY)],
    root: repoRoot,
    compile: { outfile: resolve(options.outfile), ...(options.target ? { target: options.target } : {}) },
    minify: { whitespace: options.minifyWhitespace ?? false, syntax: true, identifiers: false },
    sourcemap: "none",
  });
  if (!result.success) throw new Error(`build failed:\n${result.logs.map(String).join("\n")}`);
  const outfile = resolve(options.outfile);
  return { outfile, bytes: Bun.file(outfile).size };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      entry: { type: "string", default: "cli/mnemo.ts" },
      outfile: { type: "string", default: "dist/mnemo" },
      target: { type: "string" },
      "minify-whitespace": { type: "boolean", default: false },
    },
  });
  const started = performance.now();
  const built = await buildBinary({
    entry: values.entry!,
    outfile: values.outfile!,
    target: values.target as Bun.Build.CompileTarget | undefined,
    minifyWhitespace: values["minify-whitespace"],
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(`built ${built.outfile} (${(built.bytes / 1e6).toFixed(0)} MB) in ${seconds} s\n`);
}
