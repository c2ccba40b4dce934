/** The spec's scopes (§5). Keys carry a subset; other credentials carry all. */
export const ALL_SCOPES = ["chat", "memory:read", "memory:write", "files:write", "usage:read"] as const;
export type Scope = (typeof ALL_SCOPES)[number];

export const isScope = (value: string): value is Scope => (ALL_SCOPES as readonly string[]).includes(value);

/** Parses a comma-separated scope list; throws naming the first unknown scope. */
export function parseScopes(text: string): Scope[] {
  const scopes = [...new Set(text.split(",").map((s) => s.trim()).filter(Boolean))];
  const unknown = scopes.find((s) => !isScope(s));
  if (unknown) throw new Error(`unknown scope '${unknown}' (known: ${ALL_SCOPES.join(", ")})`);
  if (scopes.length === 0) throw new Error("at least one scope is required");
  return scopes as Scope[];
}
