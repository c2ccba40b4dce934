/**
 * `npm run generate:clients`: regenerates the typed clients' generated layers from the
 * OpenAPI document of this tree's server (an ephemeral server on port 0, fetched once):
 * clients/typescript/src/generated.ts, clients/python/mnemo_client/_generated.py, and the
 * web app's types, web/src/api-schema.ts. `--check` writes nothing and exits 1 when any is stale.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Schema } from "../clients/codegen/operations";
import { renderPython } from "../clients/codegen/python";
import { renderTypeScript } from "../clients/codegen/typescript";
import { renderWebTypes } from "../clients/codegen/web-types";
import { loadConfig } from "../src/config";
import { createLogger } from "../src/lib/log";
import { startServer } from "../src/server";

const ROOT = join(import.meta.dir, "..");
export const GENERATED = {
  typescript: join(ROOT, "clients/typescript/src/generated.ts"),
  python: join(ROOT, "clients/python/mnemo_client/_generated.py"),
  web: join(ROOT, "web/src/api-schema.ts"),
};

/** The OpenAPI document as a server of this tree serves it. */
export async function fetchOpenApiDocument(): Promise<Schema> {
  const config = loadConfig(
    { port: 0, logLevel: "error" },
    { STORAGE_PROVIDER: "memory", EMBEDDINGS_PROVIDER: "none" },
  );
  const server = await startServer(config, { log: createLogger("error") });
  try {
    const response = await fetch(`${server.url}/openapi/json`);
    if (!response.ok) throw new Error(`GET /openapi/json answered ${response.status}`);
    return (await response.json()) as Schema;
  } finally {
    await server.stop();
  }
}

/** Each generated file's path and the text it should hold. */
export function renderClients(doc: Schema): Array<[string, string]> {
  return [
    [GENERATED.typescript, renderTypeScript(doc)],
    [GENERATED.python, renderPython(doc)],
    [GENERATED.web, renderWebTypes(doc)],
  ];
}

/** The generated files whose text differs from what `doc` renders. */
function staleClients(doc: Schema): string[] {
  const read = (path: string) => {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return null;
    }
  };
  return renderClients(doc)
    .filter(([path, text]) => read(path) !== text)
    .map(([path]) => path.slice(ROOT.length + 1));
}

if (import.meta.main) {
  const doc = await fetchOpenApiDocument();
  if (process.argv.includes("--check")) {
    const stale = staleClients(doc);
    if (stale.length) {
      console.error(`stale: ${stale.join(", ")}; run npm run generate:clients`);
      process.exit(1);
    }
  } else {
    for (const [path, text] of renderClients(doc)) writeFileSync(path, text);
    console.log(
      `wrote ${Object.values(GENERATED)
        .map((path) => path.slice(ROOT.length + 1))
        .join(", ")}`,
    );
  }
  process.exit(0);
}
