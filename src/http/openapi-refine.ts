import { ERROR_STATUSES } from "../shared/error-body";

/**
 * The optional decryption headers of the PKMS routes (docs/encryption.md#reading), as OpenAPI parameters.
 * Route files may spread them into their `detail.parameters`; the app adds them to every
 * `/v1/workspaces…` and `/v1/documents…` operation anyway.
 */
export const PKMS_HEADERS = [
  {
    name: "X-Proxy-Decrypt",
    in: "header",
    required: false,
    description:
      "`true` asks for stored encrypted values to be decrypted with the client key (accepted; decryption comes with the encryption feature)",
    schema: { type: "string", enum: ["true"] },
  },
  {
    name: "X-Client-Key",
    in: "header",
    required: false,
    description: "the client key for X-Proxy-Decrypt; without it the escrowed key is used",
    schema: { type: "string" },
  },
] as const;

type Operation = {
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, unknown>;
  security?: unknown[];
};
type Document = { paths?: Record<string, Record<string, Operation>> } & Record<string, unknown>;

const PKMS_PATH = /^\/v1\/(workspaces|documents)(\/|$)/;
const WORKSPACE_FIELDS = ["workspace_id", "workspaceId"];
const CUSTOM_ID_FIELDS = ["id", "documentId"];

/**
 * Makes the generated OpenAPI document say what the server does:
 * - one entry per path (`/v1/memories`, never also `/v1/memories/`);
 * - bodies are JSON only, with the route's schema (the generator leaves a body empty when
 *   the app parses bodies itself);
 * - the PKMS routes document `X-Proxy-Decrypt` and `X-Client-Key`;
 * - a route that spreads every error status lists only those it can answer: 400 with
 *   a body, query or path parameter; 404 with a path parameter or a workspace field;
 *   409 when the body may carry a custom id; 413 and 415 with a body; 401, 403, 500
 *   and 503 always. A route that can answer 429 (completions, upload start) lists its
 *   statuses itself (`errorsFor`).
 * Returns a new document; the input is not changed.
 */
export function refineOpenApi<T extends Document>(
  source: T,
  bodySchema: (method: string, pattern: string) => unknown,
): T {
  const doc = structuredClone(source);
  const paths: Record<string, Record<string, Operation>> = {};
  for (const [rawPath, operations] of Object.entries(doc.paths ?? {})) {
    const pattern = rawPath.replace(/\{([^}]+)\}/g, ":$1");
    for (const [method, operation] of Object.entries(operations)) {
      if (operation?.requestBody) jsonBody(operation, bodySchema(method.toUpperCase(), pattern));
    }
    const path = rawPath.length > 1 ? rawPath.replace(/\/+$/, "") : rawPath;
    paths[path] = { ...paths[path], ...operations };
  }
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (typeof operation !== "object" || operation === null) continue;
      if (PKMS_PATH.test(path)) addHeaders(operation);
      narrowErrorStatuses(method, operation);
    }
  }
  doc.paths = paths;
  return doc;
}

function jsonBody(operation: Operation, schema: unknown): void {
  const known = operation.requestBody?.content?.["application/json"]?.schema;
  // TypeBox schemas are JSON Schema; the round trip drops TypeBox's symbol keys.
  const body = known ?? (schema ? JSON.parse(JSON.stringify(schema)) : undefined);
  if (body) operation.requestBody = { ...operation.requestBody, content: { "application/json": { schema: body } } };
}

function addHeaders(operation: Operation): void {
  const parameters = operation.parameters ?? [];
  for (const header of PKMS_HEADERS) {
    if (!parameters.some((p) => p.in === "header" && p.name.toLowerCase() === header.name.toLowerCase()))
      parameters.push({ ...header });
  }
  operation.parameters = parameters;
}

function narrowErrorStatuses(method: string, operation: Operation): void {
  const responses = operation.responses;
  if (!responses || !ERROR_STATUSES.every((status) => String(status) in responses)) return;
  const parameters = operation.parameters ?? [];
  const hasBody = !!operation.requestBody;
  const hasPath = parameters.some((p) => p.in === "path");
  const names = new Set([...parameters.filter((p) => p.in === "query").map((p) => p.name), ...bodyFields(operation)]);
  const keep = new Set<number>([401, 403, 500, 503]);
  if (hasBody || hasPath || parameters.some((p) => p.in === "query")) keep.add(400);
  if (hasPath || WORKSPACE_FIELDS.some((field) => names.has(field))) keep.add(404);
  if (method.toLowerCase() === "post" && CUSTOM_ID_FIELDS.some((field) => bodyFields(operation).has(field)))
    keep.add(409);
  if (hasBody) keep.add(413).add(415);
  for (const status of ERROR_STATUSES) if (!keep.has(status)) delete responses[String(status)];
}

/** Top-level property names of the JSON body schema, through unions and intersections. */
function bodyFields(operation: Operation): Set<string> {
  const names = new Set<string>();
  const visit = (schema: unknown) => {
    if (!schema || typeof schema !== "object") return;
    const s = schema as {
      properties?: Record<string, unknown>;
      anyOf?: unknown[];
      oneOf?: unknown[];
      allOf?: unknown[];
    };
    for (const name of Object.keys(s.properties ?? {})) names.add(name);
    for (const part of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) visit(part);
  };
  visit(operation.requestBody?.content?.["application/json"]?.schema);
  return names;
}
