import type { TestServer } from "./server";

/** Creates a workspace for `token`'s user (default alice) and returns its id. */
export async function createWorkspace(server: TestServer, name = "Workspace", token?: string): Promise<string> {
  const [status, body] = await server.call("POST", "/v1/workspaces", { body: { name }, token });
  if (status !== 201) throw new Error(`workspace create failed: ${status} ${JSON.stringify(body)}`);
  return body.id;
}

/** Creates a unified document through POST /v1/documents and returns its full record. */
export async function createDocument(
  server: TestServer,
  workspaceId: string,
  body: Record<string, unknown>,
  token?: string,
) {
  const [status, created] = await server.call("POST", "/v1/documents", {
    body: { workspace_id: workspaceId, ...body },
    token,
  });
  if (status !== 201) throw new Error(`document create failed: ${status} ${JSON.stringify(created)}`);
  return created.document;
}

/**
 * Runs a documents query and returns its items' `id`s (block, message or memory ids), best
 * first. Full text alone unless `body.signals` says otherwise: the callers check what the
 * index holds, not the word vectors' neighbours.
 */
export async function queryIds(server: TestServer, body: Record<string, unknown>, token?: string): Promise<string[]> {
  const [status, result] = await server.call("POST", "/v1/documents/query", {
    body: { signals: ["text"], ...body },
    token,
  });
  if (status !== 200) throw new Error(`query failed: ${status} ${JSON.stringify(result)}`);
  return result.items.map((item: { id: string }) => item.id);
}

/** The error body, `{error: {code, message}}`. */
export const apiError = (code: string, message: string) => ({ error: { code, message } });
