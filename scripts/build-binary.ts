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
 * Measured in docs/performance.md "Single binary".
 * LanceDB's native module ships with its symbol table (34 of its 202 MB): when binutils'
 * `strip` is on PATH, a stripped copy is embedded instead (`--no-strip` keeps it as is).
 * Only `.symtab` goes; the dynamic symbols Node-API loads by stay, Rust panics lose names.
 * It is loaded by a loader of ours (the first start copies it into `$TMPDIR`, as Bun would),
 * and Apache Arrow is bundled once: see {@link lanceNativeLoader} and {@link oneArrow}.
 *
 * The web app (web/dist, scripts/build-app.ts) is built first and embedded by the server's
 * text imports (src/web-app/assets.ts): the binary serves /app with nothing else installed.
 *
 * Usage: bun scripts/build-binary.ts [--entry cli/mnemo.ts] [--outfile dist/mnemo]
 *          [--target bun-linux-x64] [--minify-whitespace] [--bytecode] [--no-strip]
 */
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
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

/** The namespace of the modules {@link lanceNativeLoader} makes. */
const NATIVE_NS = "mnemo-native";
/** Suffixes naming, after a `.node` file's path, its loader (CommonJS) and its embedded path (an ES module). */
const LOADER_SUFFIX = ".loader.cjs";
const PATH_SUFFIX = ".path.mjs";

/**
 * The loader of an embedded native module: copies it out of the binary into `$TMPDIR` once,
 * under a name carrying a hash of its bytes taken at build time, and `dlopen`s that copy.
 * Bun's own `require()` of an embedded `.node` hashes all its bytes on every start to name
 * the copy (~20 ms for LanceDB's 168 MB, measured on the 2-core VM): here it is known.
 * A copy is used only when it is this user's regular file of the right size that no one
 * else may write; else it is written anew (beside it, then renamed: never half-written),
 * from a buffer: Bun can read a file out of the binary synchronously only whole, so that
 * first start peaks ~100 MB higher, while every later one no longer reads the 168 MB at all.
 */
function nativeLoaderSource(embeddedPath: string, fileName: string, size: number): string {
  return `const { lstatSync, readFileSync, renameSync, writeFileSync } = require("node:fs");
const { tmpdir } = require("node:os");
const { join } = require("node:path");
const embedded = require(${JSON.stringify(embeddedPath + PATH_SUFFIX)}).default;
const target = join(tmpdir(), ${JSON.stringify(fileName)});
let usable = false;
try {
  const found = lstatSync(target);
  usable = found.isFile() && found.size === ${size} && found.uid === process.getuid() && (found.mode & 0o022) === 0;
} catch {}
if (!usable) {
  const partial = \`\${target}.\${process.pid}.partial\`;
  writeFileSync(partial, readFileSync(embedded), { mode: 0o600 });
  renameSync(partial, target);
}
process.dlopen(module, target);
`;
}

/**
 * Embeds `@lancedb/lancedb-<platform>` (its main is the `.node` file), stripped when it can
 * be (see above), behind {@link nativeLoaderSource} instead of Bun's own loading.
 */
function lanceNativeLoader(strip: boolean): Bun.BunPlugin {
  return {
    name: "lancedb-native-loader",
    setup(build) {
      build.onResolve({ filter: /^@lancedb\/lancedb-[a-z0-9-]+$/ }, (args) => {
        let original: string;
        try {
          original = Bun.resolveSync(args.path, args.resolveDir);
        } catch {
          return undefined; // another platform's package, not installed: the bundler handles it as before
        }
        if (!original.endsWith(".node")) return undefined;
        const embedded = (strip && strippedCopy(original)) || original;
        return { path: embedded + LOADER_SUFFIX, namespace: NATIVE_NS };
      });
      // The file itself, embedded as is: its `$bunfs` path (a module apart, at a path of its own).
      build.onResolve({ filter: /\.node\.path\.mjs$/ }, (args) => ({ path: args.path, namespace: NATIVE_NS }));
      build.onLoad({ filter: /\.node\.path\.mjs$/, namespace: NATIVE_NS }, (args) => ({
        contents: `import path from ${JSON.stringify(args.path.slice(0, -PATH_SUFFIX.length))} with { type: "file" };\nexport default path;\n`,
        loader: "js",
      }));
      build.onLoad({ filter: /\.node\.loader\.cjs$/, namespace: NATIVE_NS }, async (args) => {
        const embedded = args.path.slice(0, -LOADER_SUFFIX.length);
        const bytes = await Bun.file(embedded).bytes();
        const fileName = `.mnemo-${Bun.hash(bytes).toString(16).padStart(16, "0")}-${basename(embedded).replace(/^\d+-\d+-/, "")}`;
        return { contents: nativeLoaderSource(embedded, fileName, bytes.length), loader: "js" };
      });
    },
  };
}

/**
 * One Apache Arrow in the binary: LanceDB `require()`s its CommonJS build, our modules
 * `import` it, and the package's export conditions give each its own build of the same
 * version, so both would be bundled and both evaluated at start (~10 ms each). ES imports
 * resolve to the CommonJS build LanceDB uses (the same 18.x code; one copy also means
 * LanceDB sees our Arrow objects as its own classes).
 */
const oneArrow: Bun.BunPlugin = {
  name: "one-apache-arrow",
  setup(build) {
    build.onResolve({ filter: /^apache-arrow$/ }, (args) => {
      if (args.kind !== "import-statement" && args.kind !== "dynamic-import") return undefined;
      // What `require("apache-arrow")` gives from there: the "require" condition's file.
      return { path: createRequire(join(args.resolveDir, "_.js")).resolve(args.path) };
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
    plugins: [oneArrow, lanceNativeLoader(options.strip !== false)],
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
