import { rmSync } from "node:fs";
import { buildApp } from "./app";
import type { Config } from "./config";
import type { Logger } from "./lib/log";
import { openServices, type Services } from "./services";

/** Largest request body accepted (documents may carry 5 MB payloads plus markdown). */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

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
    maxRequestBodySize: MAX_BODY_BYTES,
    fetch: (request) => app.handle(request),
    error: (error) => {
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
