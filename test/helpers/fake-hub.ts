/**
 * A real local HTTP server in the Hugging Face hub's layout (`/<repo>/resolve/main/<file>`)
 * for testing downloads: large files answer like LFS (a 302 carrying `x-linked-etag` with
 * the sha256, then the bytes), small ones answer directly with a sha256 `etag`.
 */
import { createHash } from "node:crypto";

/** How the hub misbehaves for one file. */
export type FileFault = "corrupt" | "missing";

/** A running fake hub. */
export interface FakeHub {
  /** Base URL to pass as `hubUrl`, e.g. `http://127.0.0.1:40123`. */
  url: string;
  /** Requests received so far, as paths (`/Xenova/all-MiniLM-L6-v2/resolve/main/tokenizer.json`). */
  requests: string[];
  /** Serve these files for `repo` (paths as in the hub). */
  setRepo(repo: string, files: Record<string, Uint8Array>): void;
  /** `corrupt`: advertise the right sha256 but send different bytes; `missing`: 404. */
  setFault(repo: string, path: string, fault: FileFault | undefined): void;
  stop(): Promise<void>;
}

// Files at least this big are answered like LFS files: redirect first, bytes second.
const LFS_THRESHOLD = 10_000;

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Starts a fake hub on a free port.
 *
 * @example
 * const hub = startFakeHub();
 * hub.setRepo("Xenova/all-MiniLM-L6-v2", tinyModelFiles());
 * await pullModel({ modelsDir, model: "all-MiniLM-L6-v2", hubUrl: hub.url });
 */
export function startFakeHub(): FakeHub {
  const repos = new Map<string, Record<string, Uint8Array>>();
  const faults = new Map<string, FileFault>();
  const requests: string[] = [];

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const url = new URL(request.url);
      requests.push(url.pathname);
      const cdn = url.pathname.match(/^\/cdn\/(.+?)\/main\/(.+)$/);
      const resolve = url.pathname.match(/^\/(.+?\/.+?)\/resolve\/main\/(.+)$/);
      const [, repo, path] = cdn ?? resolve ?? [];
      const bytes = repo ? repos.get(repo)?.[path] : undefined;
      const fault = faults.get(`${repo}/${path}`);
      if (!bytes || fault === "missing") return new Response("Entry not found", { status: 404 });
      const body = fault === "corrupt" ? bytes.map((byte) => byte ^ 0xff) : bytes;
      if (resolve && bytes.byteLength >= LFS_THRESHOLD) {
        return new Response(null, {
          status: 302,
          headers: {
            location: `/cdn/${repo}/main/${path}`,
            "x-linked-etag": `"${sha256(bytes)}"`,
            "x-linked-size": String(bytes.byteLength),
          },
        });
      }
      return new Response(body, {
        headers: { etag: `"${sha256(bytes)}"`, "content-type": "application/octet-stream" },
      });
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    setRepo: (repo, files) => void repos.set(repo, files),
    setFault(repo, path, fault) {
      if (fault) faults.set(`${repo}/${path}`, fault);
      else faults.delete(`${repo}/${path}`);
    },
    stop: () => server.stop(true),
  };
}
