import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, type ConfigOverrides } from "../../src/config";
import { createLogger, type Logger } from "../../src/lib/log";
import { startServer, type RunningServer } from "../../src/server";
import { databaseEnvFor, dropDatabaseFor } from "./database";

export interface TestServer extends RunningServer {
  dataDir: string;
  /** `[status, body]` of a JSON request; prints the body when a status check fails. */
  call(
    method: string,
    path: string,
    options?: { token?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<[number, any]>;
  /** Stops the server and removes its data dir. */
  destroy(): Promise<void>;
}

export const tempDir = (prefix = "mnemo-test-") => mkdtempSync(join(tmpdir(), prefix));

/**
 * Starts the real server on port 0 with its own temp data dir. The environment is
 * given explicitly (never the developer's), defaulting to full-text search only.
 */
export async function startTestServer(
  options: { env?: Record<string, string>; overrides?: ConfigOverrides; dataDir?: string; log?: Logger } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDir();
  const env = { EMBEDDINGS_PROVIDER: "none", ...(await databaseEnvFor(dataDir)), ...options.env };
  const config = loadConfig({ dataDir, port: 0, allowMockTokens: true, logLevel: "error", ...options.overrides }, env);
  const server = await startServer(config, {
    log: options.log ?? createLogger((process.env.MNEMO_TEST_LOG as "debug") ?? "error"),
  });
  return withClient(server, dataDir);
}

export function withClient(server: RunningServer, dataDir: string): TestServer {
  return {
    ...server,
    dataDir,
    async call(method, path, { token = "mock-token-alice", body, headers = {} } = {}) {
      const response = await fetch(server.url + path, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {}
      return [response.status, parsed];
    },
    async destroy() {
      await server.stop();
      if (!options_keep(dataDir)) {
        rmSync(dataDir, { recursive: true, force: true });
        await dropDatabaseFor(dataDir);
      }
    },
  };
}

// Data dirs under test/ fixtures are never removed; temp dirs are.
const options_keep = (dir: string) => !dir.startsWith(tmpdir());

/** A bearer header value for a mock user. */
export const mock = (user: string) => `mock-token-${user}`;
