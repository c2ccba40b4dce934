import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { ConfigSchema, type ConfigOverrides } from "./config-schema";

// How a configuration that fails its schema is told to the operator: one line naming the
// variable or flag they set, and what it takes.

type Env = Record<string, string | undefined>;

/** A configuration the operator must fix: the message names the variable (or flag) and what it takes. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** Overrides given as CLI flags: an error in one names the flag, not the variable. */
const FLAG_OVERRIDES = ["dataDir", "host", "port", "allowMockTokens", "logLevel"] as const;

/** The schema node at a TypeBox error path (`/indexer/batchSize`), with the nearest description on the way. */
function describedSchemaAt(path: string): { schema: TSchema; description: string } {
  let schema: TSchema = ConfigSchema;
  let description = "";
  for (const segment of path.split("/").filter(Boolean)) {
    const next = schema.properties?.[segment] ?? (schema.type === "array" ? schema.items : undefined);
    if (!next) break;
    schema = next;
    if (typeof schema.description === "string") description = schema.description;
  }
  return { schema, description };
}

/** What a schema node takes, in words: `a whole number from 0 to 65535`, `one of: debug, info`. */
function expectation(schema: TSchema): string {
  if (schema.expected) return schema.expected;
  if (schema.type === "integer" || schema.type === "number") {
    const { minimum: min, maximum: max } = schema;
    return `a whole number${min !== undefined && max !== undefined ? ` from ${min} to ${max}` : min !== undefined ? ` of at least ${min}` : max !== undefined ? ` of at most ${max}` : ""}`;
  }
  if (Array.isArray(schema.anyOf) && schema.anyOf.every((s: TSchema) => "const" in s))
    return `one of: ${schema.anyOf.map((s: TSchema) => s.const).join(", ")}`;
  if (schema.type === "string" && schema.minLength) return "a non-empty value";
  return `a valid ${schema.type ?? "value"}`;
}

/** A value safe to echo in an error: never a secret, never a URL's password. */
function shownValue(name: string, value: unknown): string {
  if (/KEY|SECRET|TOKEN|PASSWORD/.test(name)) return "the value given";
  return `'${String(value).replace(/\/\/[^/@\s]*@/, "//…@")}'`;
}

/**
 * The first schema violation as one line naming what the operator set: the environment
 * variable (from the field's description, e.g. `MNEMO_PORT`) or the CLI flag it came from.
 */
export function configError(config: unknown, overrides: ConfigOverrides, env: Env): ConfigError | null {
  const error = Value.Errors(ConfigSchema, config).First();
  if (!error) return null;
  const { schema, description } = describedSchemaAt(error.path);
  const variable = /^[A-Z][A-Z0-9_]+/.exec(description)?.[0];
  const field = error.path.split("/")[1] as (typeof FLAG_OVERRIDES)[number];
  const overridden = FLAG_OVERRIDES.includes(field) && overrides[field] !== undefined;
  const flag = overridden ? /--[a-z][a-z-]*/.exec(description)?.[0] : undefined;
  const name = flag ?? variable ?? `configuration ${error.path}`;
  const raw = overridden || !variable || env[variable] === undefined ? error.value : env[variable];
  return new ConfigError(`${name}: ${shownValue(name, raw)} is not ${expectation(schema)}`);
}
