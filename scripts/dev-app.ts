/**
 * The web app's dev harness: builds web/ (again on every change under web/src), starts the
 * real server (`mnemo serve --allow-mock-tokens` on a temp data dir, full-text search
 * unless EMBEDDINGS_PROVIDER says otherwise), and serves web/dist from disk at /app on a
 * second port that forwards the API (/v1, /health, /openapi, /mcp) to it: one origin, as
 * when the server serves the app itself (which embeds the build it started with, so a
 * rebuild shows only here). Sign in by pasting `mock-token-alice`.
 *
 *   bun scripts/dev-app.ts [--port 5173] [--data DIR]
 *
 * For development only: the tests drive the server itself, which serves the app at /app.
 */
import { watch } from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { APP_CSP } from "../src/web-app/assets";
import { APP_HEADERS } from "../src/web-app/static";
import { APP_FILES, buildWebApp, WEB_DIST } from "./build-app";

/** The policy the server sends with the app; this harness sends the same. */
export { APP_CSP };

const TYPES: Record<(typeof APP_FILES)[number], string> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
};
const API_PREFIXES = ["/v1/", "/health", "/openapi", "/mcp"];

export interface WebAppServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * Serves the built app at /app (every /app/* path that is not a file answers index.html,
 * for the history router) and forwards API paths to `apiUrl`, Host header kept, so
 * presigned upload URLs point back at this origin.
 */
export function serveWebApp(options: { apiUrl: string; distDir?: string; port?: number }): WebAppServer {
  const distDir = options.distDir ?? WEB_DIST;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: options.port ?? 0,
    idleTimeout: 120,
    async fetch(request) {
      const url = new URL(request.url);
      const path = url.pathname;
      if (API_PREFIXES.some((prefix) => path === prefix.replace(/\/$/, "") || path.startsWith(prefix))) {
        return fetch(options.apiUrl + path + url.search, {
          method: request.method,
          headers: request.headers,
          body: request.method === "GET" || request.method === "HEAD" ? undefined : request.body,
          redirect: "manual",
        });
      }
      if (path === "/") return Response.redirect("/app/", 302);
      if (path !== "/app" && !path.startsWith("/app/")) return new Response("not found", { status: 404 });
      if (request.method !== "GET" && request.method !== "HEAD")
        return new Response("method not allowed", { status: 405 });
      const name = APP_FILES.find((file) => file !== "index.html" && path === `/app/${file}`) ?? "index.html";
      return new Response(Bun.file(join(distDir, name)), { headers: { ...APP_HEADERS, "content-type": TYPES[name] } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, stop: async () => void server.stop(true) };
}

/** Starts `mnemo serve` as a child process; resolves with its URL once it listens. */
async function startMnemo(dataDir: string): Promise<{ url: string; stop(): Promise<void> }> {
  const child = Bun.spawn(
    [
      "bun",
      join(import.meta.dir, "..", "cli", "mnemo.ts"),
      "serve",
      "--port",
      "0",
      "--data",
      dataDir,
      "--allow-mock-tokens",
    ],
    {
      env: { EMBEDDINGS_PROVIDER: "none", ...process.env },
      stdout: "pipe",
      stderr: "inherit",
    },
  );
  const reader = child.stdout.getReader();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`mnemo serve exited (${await child.exited}) before listening:\n${text}`);
    text += new TextDecoder().decode(value);
    const match = /Mnemo listening on (\S+)/.exec(text);
    if (match) {
      reader.releaseLock();
      const stop = async () => {
        child.kill("SIGTERM");
        await child.exited;
      };
      return { url: match[1], stop };
    }
  }
}

if (import.meta.main) {
  const arg = (name: string) => {
    const at = process.argv.indexOf(name);
    return at > 0 ? process.argv[at + 1] : undefined;
  };
  const keepData = arg("--data");
  const dataDir = keepData ? resolve(keepData) : mkdtempSync(join(tmpdir(), "mnemo-app-"));
  const built = await buildWebApp();
  process.stderr.write(`built app.js: ${(built.jsGzipBytes / 1024).toFixed(1)} KB gzipped\n`);
  const mnemo = await startMnemo(dataDir);
  const app = serveWebApp({ apiUrl: mnemo.url, port: Number(arg("--port") ?? 0) });
  process.stdout.write(
    `Mnemo app: ${app.url}/app/  (API ${mnemo.url}, data ${dataDir})\nSign in by pasting mock-token-alice (or any mock-token-<user>).\n`,
  );

  let timer: ReturnType<typeof setTimeout> | undefined;
  const watcher = watch(join(import.meta.dir, "..", "web"), { recursive: true }, (_, file) => {
    if (!file || file.startsWith("dist")) return;
    clearTimeout(timer);
    timer = setTimeout(
      () =>
        buildWebApp().then(
          () => process.stderr.write("rebuilt\n"),
          (error) => process.stderr.write(`${error.message}\n`),
        ),
      100,
    );
  });
  const shutdown = async () => {
    watcher.close();
    await app.stop();
    await mnemo.stop();
    if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown());
  process.on("SIGTERM", () => void shutdown());
}
