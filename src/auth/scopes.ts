/** The scopes (docs/api.md#authentication): what a user's credential may do. Keys carry a subset; other credentials carry all. */
export const ALL_SCOPES = ["chat", "memory:read", "memory:write", "files:write", "usage:read"] as const;
/**
 * The scope of a credential made for operating the server (`mnemo keys create --operator`):
 * `/health`'s details about the server and all users. Not among ALL_SCOPES, so no user's
 * credential (a link session, a developer or ID token, a key made over HTTP) carries it.
 */
export const OPERATOR_SCOPE = "operator";
export type UserScope = (typeof ALL_SCOPES)[number];
export type Scope = UserScope | typeof OPERATOR_SCOPE;
/** Every scope a stored key may carry. */
export const KNOWN_SCOPES = [...ALL_SCOPES, OPERATOR_SCOPE] as const;

export const isScope = (value: string): value is UserScope => (ALL_SCOPES as readonly string[]).includes(value);

/** Parses a comma-separated scope list; throws naming the first unknown scope. */
export function parseScopes(text: string): UserScope[] {
  const scopes = [
    ...new Set(
      text
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = scopes.find((s) => !isScope(s));
  if (unknown) throw new Error(`unknown scope '${unknown}' (known: ${ALL_SCOPES.join(", ")})`);
  if (scopes.length === 0) throw new Error("at least one scope is required");
  return scopes as UserScope[];
}
