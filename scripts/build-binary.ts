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
 * Code splitting puts what commands `await import()` (server, LanceDB, the store) in chunks
 * of their own, so `--help` or `keys list` load 0.1 MB of JS instead of all 14 MB.
 * `--bytecode` (ESM, so top-level await stays) halves `serve`'s start but adds 21 MB to the
 * file and ~4 MB to every command's RSS, which puts `keys` over its 50 MB: off by default.
 * Measured in README "Single binary".
 * LanceDB's native module ships with its symbol table (34 of its 202 MB): when binutils'
 * `strip` is on PATH, a stripped copy is embedded instead (`--no-strip` keeps it as is).
 * Only `.symtab` goes; the dynamic symbols Node-API loads by stay, Rust panics lose names.
 *
 * The web app (web/dist, scripts/build-app.ts) is built first and embedded by the server's
 * text imports (src/web-app/assets.ts): the binary serves /app with nothing else installed.
 *
 * Usage: bun scripts/build-binary.ts [--entry cli/mnemo.ts] [--outfile dist/mnemo]
 *          [--target bun-linux-x64] [--minify-whitespace] [--bytecode] [--no-strip]
 */
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ENCODER_WORKER_ENTRY } from "../src/search/embedders/local/index.ts";
import { buildWebApp, ensureWebApp } from "./build-app.ts";

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
  /** Precompile to JavaScriptCore bytecode (faster `serve` start, larger, more RSS); default false. */
  bytecode?: boolean;
  /** Embed LanceDB's native module without its symbol table when `strip` exists; default true. */
  strip?: boolean;
}

/**
 * A stripped copy of a native module, cached by size and mtime in node_modules/.cache (the
 * repo owner's, unlike a shared temp dir where another user could plant a library); null
 * when `strip` is missing or fails (the original is embedded then).
 */
function strippedCopy(original: string): string | null {
  const strip = Bun.which("strip");
  if (!strip) return null;
  const { size, mtimeMs } = statSync(original);
  const cacheDir = join(repoRoot, "node_modules", ".cache", "mnemo-stripped");
  const target = join(cacheDir, `${size}-${Math.round(mtimeMs)}-${basename(original)}`);
  if (existsSync(target)) return target;
  mkdirSync(cacheDir, { recursive: true });
  const partial = `${target}.${process.pid}.partial`;
  copyFileSync(original, partial);
  if (Bun.spawnSync([strip, "--strip-unneeded", partial]).exitCode !== 0) {
    rmSync(partial, { force: true });
    return null;
  }
  renameSync(partial, target);
  return target;
}

/** Resolves `@lancedb/lancedb-<platform>` (its main is the `.node` file) to a stripped copy. */
const stripLanceNative: Bun.BunPlugin = {
  name: "strip-lancedb-native",
  setup(build) {
    build.onResolve({ filter: /^@lancedb\/lancedb-[a-z0-9-]+$/ }, (args) => {
      let original: string;
      try {
        original = Bun.resolveSync(args.path, args.resolveDir);
      } catch {
        return undefined; // another platform's package, not installed: the bundler handles it as before
      }
      if (!original.endsWith(".node")) return undefined;
      const stripped = strippedCopy(original);
      return stripped ? { path: stripped } : undefined;
    });
  },
};

/**
 * Compiles `entry` (plus the encoder worker) into one executable.
 *
 * @throws Error with the bundler's messages when the build fails.
 * @example
 * await buildBinary({ entry: "scripts/embed-smoke.ts", outfile: "/tmp/embed-smoke" });
 */
export async function buildBinary(options: BuildBinaryOptions): Promise<{ outfile: string; bytes: number }> {
  // The server embeds the web app's build (src/web-app/assets.ts): there must be one.
  await ensureWebApp();
  const result = await Bun.build({
    entrypoints: [join(repoRoot, options.entry), join(repoRoot, ENCODER_WORKER_ENTRY)],
    root: repoRoot,
    compile: { outfile: resolve(options.outfile), ...(options.target ? { target: options.target } : {}) },
    minify: { whitespace: options.minifyWhitespace ?? false, syntax: true, identifiers: false },
    format: "esm",
    splitting: true,
    bytecode: options.bytecode ?? false,
    plugins: options.strip === false ? [] : [stripLanceNative],
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
      bytecode: { type: "boolean", default: false },
      "no-strip": { type: "boolean", default: false },
    },
  });
  const started = performance.now();
  // A fresh build of the web app, so the binary embeds the app of this checkout.
  await buildWebApp();
  const built = await buildBinary({
    entry: values.entry!,
    outfile: values.outfile!,
    target: values.target as Bun.Build.CompileTarget | undefined,
    minifyWhitespace: values["minify-whitespace"],
    bytecode: values.bytecode,
    strip: !values["no-strip"],
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(`built ${built.outfile} (${(built.bytes / 1e6).toFixed(0)} MB) in ${seconds} s\n`);
}
