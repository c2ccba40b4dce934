/**
 * One user's data for the isolation and leak checks: a workspace and something of every
 * kind the API stores, each carrying the user's secret marker word, so that anything of
 * theirs showing up in another user's response is found by a plain substring scan.
 */
import { randomBytes } from "node:crypto";
import { waitUntil } from "../../helpers/wait";
import { fillPath, segmentBefore, type Operation } from "./openapi";

export type Call = (
  method: string,
  path: string,
  options?: { token?: string | null; body?: unknown; headers?: Record<string, string> },
) => Promise<[number, any]>;

export interface Tenant {
  user: string;
  token: string;
  /** A word that appears in everything this user stores and nowhere else. */
  marker: string;
  ids: Record<string, string>;
}

const word = () => `zq${randomBytes(6).toString("hex")}`;

async function must(call: Call, token: string, method: string, path: string, body: unknown, expected: number[]) {
  const [status, response] = await call(method, path, { token, body });
  if (!expected.includes(status))
    throw new Error(`seed ${method} ${path} answered ${status}: ${JSON.stringify(response).slice(0, 300)}`);
  return response;
}

/**
 * Seeds one user. Each created id goes into `ids` under the name the path parameter
 * resolution below uses. Routes of later issues add their fixtures here.
 */
export async function seedTenant(call: Call, user: string): Promise<Tenant> {
  const token = `mock-token-${user}`;
  const marker = word();
  const ids: Record<string, string> = {};
  const ws = await must(call, token, "POST", "/v1/workspaces", { name: `ws ${marker}` }, [201]);
  ids.workspaceId = ws.id;
  const memory = await must(
    call,
    token,
    "POST",
    "/v1/memories",
    { content: `personal ${marker} memory`, metadata: { tag: marker } },
    [201],
  );
  ids.memoryId = memory.id;
  await must(
    call,
    token,
    "POST",
    "/v1/memories",
    { content: `workspace ${marker} memory`, workspaceId: ws.id, session_id: `s-${marker}` },
    [201],
  );
  // A custom id both users use: ids are per user.
  await must(call, token, "POST", "/v1/memories", { id: "shared-custom-id", content: `custom ${marker}` }, [201]);
  const doc = await must(
    call,
    token,
    "POST",
    "/v1/documents",
    {
      workspace_id: ws.id,
      title: `doc ${marker}`,
      markdown: `# heading ${marker}\n\nparagraph ${marker}`,
      indexable_blocks: [{ id: "b1", content: `block ${marker}` }],
      metadata: { topic: marker },
    },
    [201],
  );
  ids.documentId = doc.document.id;
  ids.notebookId = `nb-${randomBytes(8).toString("hex")}`;
  const note = await must(
    call,
    token,
    "POST",
    `/v1/workspaces/${ws.id}/notes`,
    {
      documentPayload: { title: `note ${marker}` },
      blocksPayload: [{ id: "n1", text: marker }],
      markdown: `note ${marker}`,
      notebookId: ids.notebookId,
    },
    [200, 201],
  );
  ids.noteId = note.id;
  await must(
    call,
    token,
    "POST",
    `/v1/workspaces/${ws.id}/notebooks`,
    { ciphertext: JSON.stringify([{ id: ids.notebookId, name: `notebook ${marker}` }]) },
    [200, 201],
  );
  const thread = await must(
    call,
    token,
    "POST",
    `/v1/workspaces/${ws.id}/chats`,
    { title: `chat ${marker}`, metadata: { m: marker } },
    [201],
  );
  ids.threadId = thread.id;
  const message = await must(
    call,
    token,
    "POST",
    `/v1/workspaces/${ws.id}/chats/${thread.id}/messages`,
    { role: "user", content: `question ${marker}` },
    [201],
  );
  ids.messageId = message.id;
  await must(
    call,
    token,
    "POST",
    `/v1/workspaces/${ws.id}/chats/${thread.id}/messages`,
    { role: "assistant", content: `answer ${marker}` },
    [201],
  );
  await must(call, token, "PUT", `/v1/workspaces/${ws.id}/vector-manifest`, { manifest: { owner: marker } }, [200]);
  await must(call, token, "PUT", `/v1/workspaces/${ws.id}/search/block-index`, { index: { owner: marker } }, [200]);
  await must(call, token, "PUT", `/v1/workspaces/${ws.id}/graph/block-edges`, { edges: [{ owner: marker }] }, [200]);
  await seedLaterRoutes(call, token, marker, ids);
  return { user, token, marker, ids };
}

/**
 * Records of routes that landed with later issues (files, uploads): seeded when the
 * route answers, skipped while it is a 501 stub.
 */
async function seedLaterRoutes(call: Call, token: string, marker: string, ids: Record<string, string>) {
  const ws = ids.workspaceId;
  const [urlStatus, upload] = await call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
    token,
    body: { filename: `file-${marker}.md`, contentType: "text/markdown" },
  });
  if (urlStatus === 200) {
    const put = await fetch(upload.url, {
      method: "PUT",
      headers: { "content-type": "text/markdown" },
      body: `# file ${marker}\n\nfile body ${marker}\n`,
    });
    if (put.status !== 201) throw new Error(`seed PUT ${upload.url} answered ${put.status}: ${await put.text()}`);
    ids.key = upload.key;
    ids.fileId = upload.key;
  } else if (urlStatus !== 501) throw new Error(`seed upload-url answered ${urlStatus}: ${JSON.stringify(upload)}`);
  const [startStatus, started] = await call("POST", "/v1/uploads/start", {
    token,
    body: { workspaceId: ws, filename: `up-${marker}.md`, contentType: "text/markdown" },
  });
  if (startStatus === 200 || startStatus === 201) ids.uploadId = started.uploadId;
  else if (startStatus !== 501)
    throw new Error(`seed uploads/start answered ${startStatus}: ${JSON.stringify(started)}`);
  // An API key (GET/POST/DELETE /v1/keys); its secret is scanned for like any id.
  const [keyStatus, key] = await call("POST", "/v1/keys", {
    token,
    body: { name: `key-${marker}`, scopes: ["memory:read"] },
  });
  if (keyStatus !== 201) throw new Error(`seed POST /v1/keys answered ${keyStatus}: ${JSON.stringify(key)}`);
  ids.keyId = key.id;
  ids.keySecret = key.key;
  // An extraction job (POST /v1/memories/extract/jobs/:id/retry): a captured completion, when the server has a gateway.
  const [completionStatus] = await call("POST", "/v1/chat/completions", {
    token,
    headers: { "x-svc-remember": "true" },
    body: { model: "m", messages: [{ role: "user", content: `remember ${marker}` }] },
  });
  if (completionStatus === 200) {
    // Once its first attempt ran: its calls to the gateway are made during the seeding, not during a later scan.
    const [, jobs] = await waitUntil(
      () => call("GET", "/v1/memories/extract/jobs", { token }),
      ([, list]) => ["retrying", "failed", "done"].includes(list?.data?.[0]?.status),
      {
        what: "the seeded capture's extraction job to have run once",
      },
    );
    ids.jobId = jobs.data[0].id;
  }
}

/**
 * The tenant's id for a path parameter of a route, or undefined when no fixture is
 * known (the isolation test then fails, naming the route, so a new kind of id cannot
 * slip through untested). `{id}` is resolved by the segment before it.
 */
export function idFor(tenant: Tenant, path: string, param: string): string | undefined {
  if (param === "id") {
    const segment = segmentBefore(path, param);
    const byCollection: Record<string, string> = {
      proposals: "proposalId",
      memories: "memoryId",
      documents: "documentId",
      files: "fileId",
      uploads: "uploadId",
      keys: "keyId",
      jobs: "jobId",
      "dev-tokens": "devTokenId",
    };
    return tenant.ids[byCollection[segment] ?? ""];
  }
  return tenant.ids[param];
}

/** Every string of a tenant that must never reach another user: marker and ids. */
export function secretsOf(tenant: Tenant): string[] {
  return [tenant.marker, ...Object.values(tenant.ids).filter((id) => id.length >= 12 && !id.startsWith("shared"))];
}

/**
 * The first secret of `tenant` found in a response body, if any. What the caller sent
 * may come back as it was (an id named in a 404 message, the `query` echoed by a
 * search): an id the request carried is not counted, and a value the request carried
 * counts only beyond its exact echoes. Stored content holds the marker inside longer
 * text, so a leaked record is still found.
 */
export function leakIn(tenant: Tenant, body: unknown, sent = "", error = false): string | null {
  let text = typeof body === "string" ? body : JSON.stringify(body ?? "");
  // An error may quote what was sent inside its message; a success only as a whole value.
  for (const value of sentStrings(sent)) {
    if (error && value.length >= 8) text = text.split(value).join("");
    else {
      // The echo as a JSON value, and as one inside JSON text inside JSON (MCP tool results).
      const quoted = JSON.stringify(value);
      text = text.split(quoted).join('""').split(JSON.stringify(quoted).slice(1, -1)).join('""');
    }
  }
  return (
    secretsOf(tenant).find((secret) => text.includes(secret) && !(secret !== tenant.marker && sent.includes(secret))) ??
    null
  );
}

/** The string values of a request (path segments, query values, JSON body strings). */
function sentStrings(sent: string): string[] {
  const out = new Set<string>();
  for (const part of sent.split(/[\s/?&=]+/)) if (part) out.add(decodeURIComponentSafe(part.replace(/\+/g, " ")));
  const json = sent.indexOf("{");
  if (json >= 0) {
    try {
      JSON.stringify(JSON.parse(sent.slice(json)), (_, value) => {
        if (typeof value === "string") out.add(value);
        return value;
      });
    } catch {}
  }
  return [...out];
}

function decodeURIComponentSafe(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * The tenant's view of everything it owns (every GET route with its ids, and its
 * lists), to compare before and after another user's attempts. The indexer's clock
 * moves on its own and is left out.
 */
export async function ownerView(call: Call, operations: Operation[], tenant: Tenant): Promise<Record<string, unknown>> {
  const view: Record<string, unknown> = {};
  for (const op of operations.filter((o) => o.method === "GET" && !o.pending && o.pathParams.length > 0)) {
    const values = Object.fromEntries(op.pathParams.map((p) => [p, idFor(tenant, op.path, p)]));
    if (Object.values(values).some((v) => v === undefined)) continue;
    const [status, body] = await call("GET", fillPath(op.path, values as Record<string, string>), {
      token: tenant.token,
    });
    view[op.key] = [
      status,
      JSON.parse(JSON.stringify(body ?? null, (key, value) => (key === "indexerLastRunAt" ? undefined : value))),
    ];
  }
  for (const path of ["/v1/memories", "/v1/workspaces"]) view[path] = await call("GET", path, { token: tenant.token });
  return view;
}

/** Waits until the tenant's seeded records are findable (the index caught up). */
export async function waitForIndex(call: Call, tenant: Tenant): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [, found] = await call("POST", "/v1/memories/search", {
      token: tenant.token,
      body: { query: tenant.marker },
    });
    const [, docs] = await call("POST", "/v1/documents/query", {
      token: tenant.token,
      body: { query: tenant.marker, workspace_id: tenant.ids.workspaceId },
    });
    if (found?.results?.length >= 3 && docs?.items?.length >= 2) return;
    await Bun.sleep(100);
  }
  throw new Error(`index never caught up for ${tenant.user}`);
}
