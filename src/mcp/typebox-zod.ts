import type { TObject, TSchema } from "@sinclair/typebox";
import * as z from "zod";

/*
 * The MCP SDK's `registerTool` takes zod schemas: it lists them as JSON Schema and checks a
 * call's arguments with them. Our shapes are TypeBox (JSON Schema already), so the tools'
 * schemas are converted here, in one place, and never written twice. Only the keywords our
 * schemas use are understood; anything else throws when the tools are built (at import),
 * so a schema this converter would weaken never reaches a client.
 */

/** The JSON Schema keywords this converter reads (a TypeBox schema is JSON Schema). */
interface Json {
  [keyword: string]: unknown;
  const?: string | number | boolean | null;
  anyOf?: Json[];
  type?: string;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  items?: Json;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, Json>;
  patternProperties?: Record<string, Json>;
  propertyNames?: Json;
  additionalProperties?: boolean | Json;
}

const KNOWN = new Set([
  "type",
  "description",
  "const",
  "anyOf",
  "properties",
  "required",
  "additionalProperties",
  "patternProperties",
  "propertyNames",
  "items",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "minItems",
  "maxItems",
  "title",
  // Not checked: only outputs carry a format (dates), and a tool's output is its service's answer, already checked by REST's schema.
  "format",
]);
/** TypeBox's pattern for a record keyed by any string (`t.Record(t.String(), …)`). */
const ANY_KEY = "^(.*)$";

/** The zod type that accepts what `schema` accepts (and lists as the same JSON Schema). */
export function toZod(schema: TSchema): z.ZodType {
  const s = schema as Json;
  for (const key of Object.keys(s)) {
    if (!KNOWN.has(key)) throw new Error(`toZod: the keyword '${key}' is not supported`);
  }
  const typed = convert(s);
  return typeof s.description === "string" ? typed.describe(s.description) : typed;
}

/** The zod shape of a TypeBox object (what `registerTool` takes as `inputSchema`). */
export function toZodShape(schema: TObject): z.ZodRawShape {
  const required = new Set<string>(schema.required ?? []);
  return Object.fromEntries(
    Object.entries(schema.properties).map(([key, value]) => {
      const field = toZod(value);
      return [key, required.has(key) ? field : field.optional()];
    }),
  );
}

function convert(s: Json): z.ZodType {
  if ("const" in s) return z.literal(s.const);
  if (Array.isArray(s.anyOf)) return union(s.anyOf);
  switch (s.type) {
    case "string": {
      let str = z.string();
      if (s.minLength !== undefined) str = str.min(s.minLength);
      if (s.maxLength !== undefined) str = str.max(s.maxLength);
      if (s.pattern !== undefined) str = str.regex(new RegExp(s.pattern));
      return str;
    }
    case "integer":
    case "number": {
      let num = s.type === "integer" ? z.int() : z.number();
      if (s.minimum !== undefined) num = num.min(s.minimum);
      if (s.maximum !== undefined) num = num.max(s.maximum);
      return num;
    }
    case "boolean":
      return z.boolean();
    case "null":
      return z.null();
    case "array": {
      let arr = z.array(toZod(s.items as TSchema));
      if (s.minItems !== undefined) arr = arr.min(s.minItems);
      if (s.maxItems !== undefined) arr = arr.max(s.maxItems);
      return arr;
    }
    case "object":
      return object(s);
    case undefined:
      if (Object.keys(s).every((key) => key === "description" || key === "title")) return z.unknown();
  }
  throw new Error(`toZod: the schema ${JSON.stringify(s)} is not supported`);
}

/** A union of string constants is an enum (listed as `{type: "string", enum}`, as clients expect). */
function union(parts: Json[]): z.ZodType {
  if (
    parts.every(
      (part) => typeof part.const === "string" && Object.keys(part).every((key) => key === "const" || key === "type"),
    )
  ) {
    return z.enum(parts.map((part) => part.const as string) as [string, ...string[]]);
  }
  return z.union(parts.map((part) => toZod(part as TSchema)) as [z.ZodType, z.ZodType, ...z.ZodType[]]);
}

function object(s: Json): z.ZodType {
  const patterns = Object.keys(s.patternProperties ?? {});
  if (patterns.some((pattern) => pattern !== ANY_KEY))
    throw new Error(`toZod: the key patterns ${JSON.stringify(patterns)} are not supported`);
  const values = patterns.length ? (s.patternProperties?.[ANY_KEY] ?? null) : null;
  const properties = s.properties ?? {};
  if (values && Object.keys(properties).length)
    throw new Error("toZod: an object with both properties and a record's values is not supported");
  if (Object.keys(properties).length === 0) {
    // A record: free-form (`additionalProperties: true`) or with typed values (TypeBox's `t.Record`).
    const key = s.propertyNames ? (toZod(s.propertyNames as TSchema) as z.ZodString) : z.string();
    const value = values
      ? toZod(values as TSchema)
      : typeof s.additionalProperties === "object"
        ? toZod(s.additionalProperties as TSchema)
        : z.unknown();
    return z.record(key, value);
  }
  const shape = toZodShape(s as TObject);
  if (s.additionalProperties === true) return z.looseObject(shape);
  if (s.additionalProperties === false) return z.strictObject(shape);
  if (typeof s.additionalProperties === "object")
    return z.object(shape).catchall(toZod(s.additionalProperties as TSchema));
  return z.object(shape);
}
