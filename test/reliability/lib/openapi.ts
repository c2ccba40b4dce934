/**
 * The reliability suites are generated from the running server's own OpenAPI document
 * (GET /openapi/json), so a route added by any later change is exercised without
 * anyone editing these tests: every operation, its path/query/header parameters, its
 * request body schema and its declared responses.
 */

export type JsonSchema = Record<string, any>;

export interface Operation {
  method: string;
  /** OpenAPI form: `/v1/workspaces/{workspaceId}`. */
  path: string;
  /** `GET /v1/workspaces/:workspaceId`, the form used in the reviewed lists. */
  key: string;
  pathParams: string[];
  queryParams: Array<{ name: string; schema: JsonSchema; required: boolean }>;
  headerParams: Array<{ name: string; schema: JsonSchema }>;
  body?: JsonSchema;
  /** Declared responses by status (`"200"`, `"404"`, `"default"`). */
  responses: Record<string, JsonSchema | undefined>;
  /** Tagged "not implemented yet": a pending spec route answering 501. */
  pending: boolean;
}

export const routeKey = (method: string, path: string) =>
  `${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ":$1")}`;

/** Reads every operation of the server's OpenAPI document. */
export async function loadOperations(baseUrl: string): Promise<Operation[]> {
  const response = await fetch(`${baseUrl}/openapi/json`);
  if (response.status !== 200) throw new Error(`GET /openapi/json answered ${response.status}`);
  const doc = (await response.json()) as { paths: Record<string, Record<string, any>> };
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const params: any[] = op.parameters ?? [];
      const responses: Record<string, JsonSchema | undefined> = {};
      for (const [status, declared] of Object.entries<any>(op.responses ?? {})) {
        responses[status] = declared?.content?.["application/json"]?.schema;
      }
      operations.push({
        method: method.toUpperCase(),
        path,
        key: routeKey(method, path),
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]),
        queryParams: params
          .filter((p) => p.in === "query")
          .map((p) => ({ name: p.name, schema: p.schema ?? {}, required: !!p.required })),
        headerParams: params.filter((p) => p.in === "header").map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        body: op.requestBody?.content?.["application/json"]?.schema ?? firstContentSchema(op.requestBody),
        responses,
        pending: (op.tags ?? []).includes("not implemented yet"),
      });
    }
  }
  return operations;
}

function firstContentSchema(requestBody: any): JsonSchema | undefined {
  const content = requestBody?.content;
  if (!content) return undefined;
  const first = Object.values<any>(content)[0];
  return first?.schema;
}

/**
 * Fills `{param}` segments, URL-encoding each value. A lone surrogate becomes the bytes
 * ED A0 80 (a surrogate in UTF-8 form, which is invalid UTF-8): a hostile path too.
 */
export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (values[name] === undefined) throw new Error(`no value for path parameter ${name} of ${path}`);
    return encodeLoose(values[name]);
  });
}

export function encodeLoose(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return value
      .replace(/[\uD800-\uDFFF]/g, "\u0000")
      .split("\u0000")
      .map(encodeURIComponent)
      .join("%ED%A0%80");
  }
}

/** The segment before a parameter: `memories` for `/v1/memories/{id}`. */
export function segmentBefore(path: string, param: string): string {
  const parts = path.split("/");
  const at = parts.indexOf(`{${param}}`);
  return at > 0 ? parts[at - 1] : "";
}

/**
 * A minimal body the schema accepts: required properties only, each at its smallest
 * valid value, with `hints` (by property name) taking precedence. Used where a test
 * wants validation to pass so the ownership check is what answers.
 */
export function minimalBody(schema: JsonSchema | undefined, hints: Record<string, unknown> = {}): unknown {
  if (!schema) return undefined;
  return minimalValue(schema, hints, "");
}

function minimalValue(schema: JsonSchema, hints: Record<string, unknown>, name: string): unknown {
  if (name && name in hints) return hints[name];
  if ("const" in schema) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf || schema.oneOf) {
    const options: JsonSchema[] = schema.anyOf ?? schema.oneOf;
    const preferred = options.find((o) => o.type === "object") ?? options.find((o) => o.type !== "null") ?? options[0];
    return minimalValue(preferred, hints, name);
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type;
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      // Required properties, plus any the caller hints at (a PATCH needing "at least one").
      const keys = new Set<string>([
        ...(schema.required ?? []),
        ...Object.keys(schema.properties ?? {}).filter((key) => key in hints),
      ]);
      for (const key of keys) out[key] = minimalValue(schema.properties?.[key] ?? {}, hints, key);
      return out;
    }
    case "array":
      return Array.from({ length: schema.minItems ?? 0 }, () => minimalValue(schema.items ?? {}, hints, ""));
    case "string":
      return "x".repeat(Math.max(1, schema.minLength ?? 1));
    case "integer":
    case "number":
      return schema.minimum ?? 1;
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return {};
  }
}

/** Property names of a body schema (top level, through anyOf/oneOf). */
export function bodyProperties(schema: JsonSchema | undefined): string[] {
  if (!schema) return [];
  const options: JsonSchema[] = schema.anyOf ?? schema.oneOf ?? [schema];
  return [...new Set(options.flatMap((o) => Object.keys(o.properties ?? {})))];
}

/**
 * A small JSON-schema check (the subset TypeBox emits: type, const, enum, required,
 * properties, additionalProperties false, items, anyOf/oneOf, min/max). Returns the
 * first violation as a path and reason, or null.
 */
export function schemaViolation(schema: JsonSchema | undefined, value: unknown, at = "$"): string | null {
  if (!schema || Object.keys(schema).length === 0) return null;
  if (schema.anyOf || schema.oneOf) {
    const options: JsonSchema[] = schema.anyOf ?? schema.oneOf;
    const failures = options.map((o) => schemaViolation(o, value, at));
    return failures.some((f) => f === null) ? null : failures[0];
  }
  if ("const" in schema && value !== schema.const) return `${at}: expected ${JSON.stringify(schema.const)}`;
  if (schema.enum && !schema.enum.includes(value)) return `${at}: not one of ${JSON.stringify(schema.enum)}`;
  const types: string[] | undefined =
    schema.type === undefined ? undefined : Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types && !types.some((t) => matchesType(t, value)))
    return `${at}: expected ${types.join("|")}, got ${jsonType(value)}`;
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (!(key in record)) return `${at}.${key}: required`;
    for (const [key, sub] of Object.entries<JsonSchema>(schema.properties ?? {})) {
      if (key in record) {
        const violation = schemaViolation(sub, record[key], `${at}.${key}`);
        if (violation) return violation;
      }
    }
    if (schema.additionalProperties === false) {
      const extra = Object.keys(record).find((key) => !(key in (schema.properties ?? {})));
      if (extra) return `${at}.${extra}: not allowed`;
    }
  }
  if (Array.isArray(value) && schema.items) {
    for (let i = 0; i < value.length; i++) {
      const violation = schemaViolation(schema.items, value[i], `${at}[${i}]`);
      if (violation) return violation;
    }
  }
  return null;
}

const jsonType = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value);

function matchesType(type: string, value: unknown): boolean {
  switch (type) {
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "object":
      return jsonType(value) === "object";
    default:
      return jsonType(value) === type;
  }
}
