/**
 * Prints the table of request body limits, as the routes declare them (their `bodyLimit`
 * option, see src/lib/body-limits.ts), for the docs:
 *
 *   bun scripts/body-limits.ts
 *
 * Builds the app on an ephemeral data dir (removed on exit); nothing listens.
 */
import { buildApp } from "../src/app";
import { openServices } from "../src/compose";
import { loadConfig } from "../src/config";
import { createRouteCatalog } from "../src/http/route-catalog";
import { DEFAULT_BODY_LIMITS, OUTER_BODY_LIMIT, type JsonLimits } from "../src/lib/body-limits";
import { describeBytes } from "../src/lib/bytes";
import { rmSync } from "node:fs";

const config = loadConfig(
  { logLevel: "error", storage: { provider: "memory" }, embeddings: { provider: "none" } },
  { ...process.env, MNEMO_DATA_DIR: undefined, MNEMO_DATABASE_URL: undefined },
);
const services = await openServices(config, { startIndexer: false });
try {
  const app = buildApp(services, () => "http://127.0.0.1");
  const catalog = createRouteCatalog(() => app.routes);
  const row = (route: string, limits: JsonLimits | "streamed") =>
    limits === "streamed"
      ? `| \`${route}\` | raw bytes, up to MNEMO_MAX_FILE_BYTES | – | – |`
      : `| \`${route}\` | ${describeBytes(limits.bytes)} | ${limits.depth} | ${limits.nodes.toLocaleString("en-US")} |`;
  const lines = [
    "| Route | Body size | JSON depth | JSON values |",
    "| --- | --- | --- | --- |",
    row("every other route", DEFAULT_BODY_LIMITS),
    ...catalog.bodyLimitTable().map(({ route, limits }) => row(route, limits)),
  ];
  process.stdout.write(
    `${lines.join("\n")}\n\nNo request may declare a body over ${describeBytes(OUTER_BODY_LIMIT)} (checked on Content-Length before routing).\n`,
  );
} finally {
  await services.close();
  rmSync(config.dataDir, { recursive: true, force: true });
}
