/**
 * The reviewed list of routes that take no id owned by a user (OWASP API1, BOLA): every
 * other route has path parameters naming the caller's records and is checked by the
 * isolation matrix with another user's ids. A route that is in neither group (a new
 * route without an owner id, or with a parameter no fixture resolves) fails the
 * isolation test until someone reviews it and lists it here, saying why it is safe.
 */
export const ROUTES_WITHOUT_OWNER_IDS: Record<string, string> = {
  "GET /health": "public liveness; no user data",
  "GET /openapi/json": "the API description; no user data",
  "GET /v1/me": "answers about the caller only (scanned for leaks)",
  "GET /v1/memories": "the caller's list (scanned for leaks)",
  "POST /v1/memories": "creates for the caller; a body workspaceId of another user is checked (404)",
  "POST /v1/memories/extract":
    "extracts for the caller: the memories shown to the model are the caller's own search results; a body workspaceId of another user is checked (404)",
  "GET /v1/memories/extract/jobs": "the caller's extraction jobs (scanned for leaks)",
  "GET /v1/memories/proposals": "the caller's pending proposals (scanned for leaks)",
  "GET /v1/me/capture": "the caller's capture default",
  "PUT /v1/me/capture": "sets the caller's capture default",
  "POST /v1/memories/search": "the caller's search (scanned for leaks with the other user's marker as query)",
  "POST /v1/context/build": "the caller's context (scanned; a body workspace of another user is checked: 404)",
  "GET /v1/workspaces": "the caller's list (scanned for leaks)",
  "POST /v1/workspaces": "creates for the caller",
  "POST /v1/documents/query": "the caller's query (scanned; a body workspace of another user is checked: 404)",
  "POST /v1/documents": "creates in a body workspace; another user's is checked (404)",
  "POST /v1/chat/completions": "the caller's completion; memory injection scanned for leaks",
  "GET /v1/models": "the model list; no user data",
  "GET /v1/usage": "the caller's counters (scanned for leaks)",
  "GET /v1/credits": "the caller's credits (scanned for leaks)",
  "GET /v1/usage/daily": "the caller's daily counters (scanned for leaks)",
  "POST /v1/app/session":
    "signs in with the body's link token or key: the session is that credential's user's (app-sessions.test.ts)",
  "POST /v1/app/link":
    "tells the holder of a sign-in link whom it signs in, without using it; needs the link's secret token (webapp-switch-account.test.ts)",
  "DELETE /v1/app/session": "ends the caller's own cookie session only (app-sessions.test.ts)",
  "GET /v1/keys": "the caller's keys (scanned for leaks)",
  "POST /v1/keys": "creates a key for the caller",
  "GET /v1/dev-tokens": "the caller's live developer tokens (scanned for leaks)",
  "POST /api/v1/webhooks/:webhookId/sync":
    "identity-provider webhook; authenticated by its signing secret, not a user token",
  "POST /mcp": "JSON-RPC; every tool and resource is checked by mcp-isolation.test.ts (generated from tools/list)",
  "GET /mcp": "405, no stream",
  "DELETE /mcp": "closes the caller's session; another user's session id is a 404 (sessions are per user)",
  "PUT /v1/workspaces/:workspaceId/files/:key":
    "presigned upload: no bearer token, the URL's signature authorizes (checked in isolation.test.ts: another user's key or workspace in a signed URL is refused)",
  "POST /v1/uploads/start": "starts an upload for the caller (body workspace checked when it has one)",
};

/** Property names through which a body or query names a workspace. */
export const WORKSPACE_FIELDS = ["workspaceId", "workspace_id"];

/**
 * Values for body properties so that validation passes and ownership is what answers:
 * `query` is what searches look for, `writer` goes into what is written.
 */
export function bodyHints(query: string, writer = "probe"): Record<string, unknown> {
  return {
    content: `probe ${writer}`,
    query,
    title: "probe",
    name: "probe",
    role: "user",
    ciphertext: "probe",
    messages: [{ role: "user", content: query }],
    model: "mock",
    contentType: "text/markdown",
    filename: "probe.md",
    partNumber: 1,
    data: "cHJvYmU=",
    // Capture stays off: on, B's probe completions (which carry A's marker as their query) would be
    // copied into B's own threads, which the scan cannot tell from a leak.
    remember: false,
  };
}
