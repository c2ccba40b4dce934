import { rmSync } from "node:fs";
import { buildApp } from "./app";
import type { Config } from "./config";
import { OUTER_BODY_LIMIT } from "./lib/body-limits";
import { describeBytes } from "./lib/bytes";
import { isLoopbackHost } from "./lib/loopback";
import type { Logger } from "./lib/log";
import { openServices, type Services } from "./compose";

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

/** A start refused before anything was opened: the message says why and what to do. */
export class StartRefusedError extends Error {}

/**
 * Mock tokens let anyone act as any user, so a server accepting them listens only where
 * no one else reaches it, unless the operator says otherwise (MNEMO_ALLOW_PUBLIC_MOCK_TOKENS).
 */
function checkMockTokenExposure(config: Config): void {
  if (!config.allowMockTokens || config.allowPublicMockTokens || isLoopbackHost(config.host)) return;
  throw new StartRefusedError(
    `refusing to listen on ${config.host} with mock tokens: anyone who reaches it could act as any user. ` +
      "Listen on 127.0.0.1 or ::1, or pass --allow-public-mock-tokens (MNEMO_ALLOW_PUBLIC_MOCK_TOKENS=1) to expose it anyway",
  );
}

/** Opens the stores and listens. Used by `mnemo serve` and by the tests (port 0). */
export async function startServer(config: Config, options: { log?: Logger } = {}): Promise<RunningServer> {
  // Before anything opens: a refused start leaves no data dir or key behind.
  checkMockTokenExposure(config);
  const services = await openServices(config, options);
  if (config.storage.provider === "memory") {
    services.log.warn("STORAGE_PROVIDER=memory: an ephemeral server; everything is deleted when it stops", {
      dataDir: config.dataDir,
    });
  }
  if (config.allowMockTokens && !isLoopbackHost(config.host)) {
    services.log.warn(
      `mock tokens are accepted (mock-token-<uid>) on ${config.host}, a non-loopback address: anyone who reaches it can act as any user`,
    );
  } else if (config.allowMockTokens) {
    services.log.warn("mock tokens are accepted (mock-token-<uid>): never expose this server");
  }
  // Presigned URLs name MNEMO_PUBLIC_URL, else the address listened on (known once listening).
  let listeningUrl = "";
  const app = buildApp(services, () => config.publicUrl ?? listeningUrl);
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    maxRequestBodySize: BUN_BODY_LIMIT,
    fetch: (request) => app.handle(request),
    error: (error) => {
      // Only what escapes the app's own error handler lands here; it still answers in shape.
      if ((error as { status?: number }).status === 413) {
        return Response.json(
          { error: { code: "payload_too_large", message: `body: is larger than ${describeBytes(OUTER_BODY_LIMIT)}` } },
          { status: 413 },
        );
      }
      services.log.error("request failed outside the app", { error });
      return Response.json({ error: { code: "error", message: "internal error" } }, { status: 500 });
    },
  });
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  listeningUrl = `http://${host}:${server.port}`;
  if (!config.publicUrl && /^(0\.0\.0\.0|::|\[::\])$/.test(config.host)) {
    services.log.warn(
      "presigned upload URLs name the listening address, which clients cannot use as such; set MNEMO_PUBLIC_URL",
      { url: listeningUrl },
    );
  }
  let stopping: Promise<void> | null = null;
  return {
    url: listeningUrl,
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
