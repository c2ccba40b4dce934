/**
 * The OpenAPI document read into what both clients' generators need: one entry per
 * operation, and every object schema given a name (structurally equal schemas share one),
 * so the generated files declare each shape once and stay readable.
 */

export type Schema = Record<string, any>;

export interface Operation {
  /** The operationId, e.g. `getV1MemoriesById`. */
  id: string;
  /** PascalCase of the id: the prefix of the operation's type names. */
  typeName: string;
  method: string;
  /** The path template, e.g. `/v1/memories/{id}`. */
  path: string;
  summary: string;
  pathParams: string[];
  /** The query's schema (an object), or null without query parameters. */
  query: Schema | null;
  body: Schema | null;
  bodyRequired: boolean;
  /** The 2xx JSON responses' schemas (distinct), empty when none is JSON. */
  responses: Schema[];
  /** The success answer is bytes (a file download), not JSON. */
  binary: boolean;
}

const METHODS = ["get", "post", "put", "patch", "delete"];

export const pascal = (text: string) =>
  text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join("");

/** Every operation of the document, in the document's order. */
export function readOperations(doc: Schema): Operation[] {
  const operations: Operation[] = [];
  for (const [path, byMethod] of Object.entries(doc.paths ?? {}) as Array<[string, Record<string, Schema>]>) {
    for (const [method, op] of Object.entries(byMethod)) {
      if (!METHODS.includes(method)) continue;
      const id = String(op.operationId ?? `${method}${pascal(path)}`).replace(/[^A-Za-z0-9]+([A-Za-z0-9]?)/g, (_, next: string) => next.toUpperCase());
      const parameters: Schema[] = op.parameters ?? [];
      const queryParams = parameters.filter((p) => p.in === "query");
      const query = queryParams.length
        ? {
            type: "object",
            required: queryParams.filter((p) => p.required).map((p) => p.name),
            properties: Object.fromEntries(queryParams.map((p) => [p.name, { ...p.schema, description: p.description ?? p.schema?.description }])),
          }
        : null;
      const body = op.requestBody?.content?.["application/json"]?.schema ?? null;
      const success = Object.entries(op.responses ?? {}).filter(([status]) => status.startsWith("2")) as Array<[string, Schema]>;
      const responses: Schema[] = [];
      for (const [, response] of success) {
        const schema = response.content?.["application/json"]?.schema;
        if (schema && !responses.some((known) => JSON.stringify(known) === JSON.stringify(schema))) responses.push(schema);
      }
      const binary = success.some(([, response]) => Object.keys(response.content ?? {}).some((type) => type !== "application/json"));
      operations.push({
        id,
        typeName: pascal(id),
        method: method.toUpperCase(),
        path,
        summary: String(op.summary ?? ""),
        pathParams: parameters.filter((p) => p.in === "path").map((p) => p.name),
        query,
        body,
        bodyRequired: Boolean(op.requestBody?.required),
        responses,
        binary,
      });
    }
  }
  return operations;
}

/** Whether a schema is an object with named fields (it gets a name of its own). */
export const isNamedObject = (schema: Schema) =>
  schema && typeof schema === "object" && (schema.type === "object" || schema.properties) && schema.properties && Object.keys(schema.properties).length > 0;

/**
 * Names object schemas: the first place a shape is met names it (`PostV1MemoriesBody`,
 * `…Data` for a field, `…Item` for an array's items); the same shape met again gets the
 * same name. `declare` is called once per name, inner shapes first.
 */
export class SchemaNames {
  private readonly byShape = new Map<string, string>();
  private readonly taken = new Set<string>();

  constructor(private readonly declare: (name: string, schema: Schema) => void) {}

  /** The name of an object schema, declaring it (and its inner objects) the first time. */
  nameOf(schema: Schema, suggested: string): string {
    const shape = JSON.stringify(schema);
    const known = this.byShape.get(shape);
    if (known) return known;
    let name = suggested;
    for (let n = 2; this.taken.has(name); n++) name = `${suggested}${n}`;
    this.taken.add(name);
    this.byShape.set(shape, name);
    this.declare(name, schema);
    return name;
  }
}

/** The parts of a union (`anyOf`, `oneOf`, a type list), or null when the schema is not one. */
export function unionParts(schema: Schema): Schema[] | null {
  if (Array.isArray(schema.anyOf)) return schema.anyOf;
  if (Array.isArray(schema.oneOf)) return schema.oneOf;
  if (Array.isArray(schema.type)) return schema.type.map((type: string) => ({ ...schema, type }));
  return null;
}
