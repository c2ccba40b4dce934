import { rmSync } from "node:fs";
import { buildApp } from "./app";
import type { Config } from "./config";
import { OUTER_BODY_LIMIT } from "./lib/body-limits";
import { describeBytes } from "./lib/json-body";
import type { Logger } from "./lib/log";
import { openServices, type Services } from "./services";

/**
 * Bun answers a body over its own `maxRequestBodySize` with a bare, empty 413 before
 * `fetch` or `error` run, so that limit is set out of reach: the app enforces the outer
 * bound (`OUTER_BODY_LIMIT`, 32 MB, on Content-Length before routing) and each route's
 * own limit while reading, and every 413 carries the error shape. Nothing reads a body
 * the route does not take, so an unread chunked body costs nothing.
 */
const BUN_BODY_LIMIT = Number.MAX_SAFE_INTEGER;

export interface RunningServer {
  url: string;
  port: number;
  services: Services;
  /** Stops accepting, lets in-flight requests finish, drains the outbox, closes stores. */
  stop(): Promise<void>;
}

/** Opens the stores and listens. Used by `mnemo serve` and by the tests (port 0). */
export async function startServer(config: Config, options: { log?: Logger } = {}): Promise<RunningServer> {
  const services = await openServices(config, options);
  if (config.storage.provider === "memory") {
    services.log.warn("STORAGE_PROVIDER=memory: an ephemeral server; everything is deleted when it stops", { dataDir: config.dataDir });
  }
  if (config.allowMockTokens) services.log.warn("mock tokens are accepted (mock-token-<uid>): never expose this server");
  const app = buildApp(services);
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    maxRequestBodySize: BUN_BODY_LIMIT,
    fetch: (request) => app.handle(request),
    error: (error) => {
      // Only what escapes the app's own error handler lands here; it still answers in shape.
      if ((error as { status?: number }).status === 413) {
        return Response.json({ error: { code: "payload_too_large", message: `body: is larger than ${describeBytes(OUTER_BODY_LIMIT)}` } }, { status: 413 });
      }
      services.log.error("request failed outside the app", { error });
      return Response.json({ error: { code: "error", message: "internal error" } }, { status: 500 });
    },
  });
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  let stopping: Promise<void> | null = null;
  return {
    url: `http://${host}:${server.port}`,
    port: server.port!,
    services,
    stop() {
      stopping ??= (async () => {
        await server.stop(false);
        await services.close();
        if (config.storage.provider === "memory") rmSync(config.dataDir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
