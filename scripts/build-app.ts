/**
 * Builds the web app: web/src/main.ts (and the CSS it imports) bundled by Bun for the
 * browser, minified, into a fixed set of files with stable names, so the server (and the
 * compiled binary) can embed them: index.html, app.js, app.css.
 *
 * The server embeds web/dist (src/web-app/assets.ts), which is not committed: `npm install`
 * (postinstall), `npm test` and scripts/build-binary.ts build it when it is missing.
 *
 *   bun scripts/build-app.ts              # → web/dist/
 *   bun scripts/build-app.ts --out DIR
 *   bun scripts/build-app.ts --if-missing # only when web/dist lacks a file
 */
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { APP_FILES } from "../src/web-app/assets";

const ROOT = resolve(import.meta.dir, "..");
export const WEB_DIST = join(ROOT, "web", "dist");

/** Every file a build writes; nothing else is ever in the output. */
export { APP_FILES };
/** The budget for the app's JavaScript, gzipped. */
export const JS_BUDGET_GZIP_BYTES = 200 * 1024;

export interface BuiltApp {
  dir: string;
  jsBytes: number;
  jsGzipBytes: number;
  cssBytes: number;
  cssGzipBytes: number;
}

/** Bundles the app into `outDir` (emptied first). Throws with Bun's messages when the build fails. */
export async function buildWebApp(outDir: string = WEB_DIST): Promise<BuiltApp> {
  const result = await Bun.build({
    entrypoints: [join(ROOT, "web", "src", "main.ts")],
    target: "browser",
    format: "esm",
    minify: true,
    sourcemap: "none",
    // No source text is needed to run: the CSP forbids eval, and the bundle must not need it.
    define: { "process.env.NODE_ENV": '"production"' },
  });
  if (!result.success) throw new Error(`web app build failed:\n${result.logs.map((log) => String(log)).join("\n")}`);
  let js: Uint8Array | null = null;
  let css: Uint8Array | null = null;
  for (const output of result.outputs) {
    const bytes = new Uint8Array(await output.arrayBuffer());
    if (output.kind === "entry-point" && output.path.endsWith(".js")) js = bytes;
    else if (output.path.endsWith(".css")) css = bytes;
    else
      throw new Error(
        `web app build: unexpected output ${output.path} (${output.kind}); the app must stay ${APP_FILES.join(", ")}`,
      );
  }
  if (!js || !css) throw new Error("web app build: expected one script and one stylesheet");
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "app.js"), js);
  writeFileSync(join(outDir, "app.css"), css);
  copyFileSync(join(ROOT, "web", "index.html"), join(outDir, "index.html"));
  return {
    dir: outDir,
    jsBytes: js.byteLength,
    jsGzipBytes: gzipSync(js, { level: 9 }).byteLength,
    cssBytes: css.byteLength,
    cssGzipBytes: gzipSync(css, { level: 9 }).byteLength,
  };
}

/** True when `dir` holds every file of a build. */
export const isBuilt = (dir: string = WEB_DIST) => APP_FILES.every((file) => existsSync(join(dir, file)));

/** Builds web/dist unless it is there already (npm test, the binary build, postinstall). */
export async function ensureWebApp(): Promise<void> {
  if (!isBuilt()) await buildWebApp();
}

if (import.meta.main) {
  if (process.argv.includes("--if-missing") && isBuilt()) process.exit(0);
  const outIndex = process.argv.indexOf("--out");
  const built = await buildWebApp(outIndex > 0 ? resolve(process.argv[outIndex + 1]) : WEB_DIST);
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  process.stdout.write(
    `web app → ${built.dir}\n  app.js  ${kb(built.jsBytes)} (${kb(built.jsGzipBytes)} gzipped; budget ${kb(JS_BUDGET_GZIP_BYTES)})\n  app.css ${kb(built.cssBytes)} (${kb(built.cssGzipBytes)} gzipped)\n`,
  );
  if (built.jsGzipBytes > JS_BUDGET_GZIP_BYTES) {
    process.stderr.write("app.js is over its gzipped budget\n");
    process.exit(1);
  }
}
