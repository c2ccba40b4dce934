/**
 * The isolation matrix (docs/reliability.md#isolation), generated from the server's OpenAPI document: user
 * B presents user A's ids on every route that takes one and gets 404 (never 403, never
 * A's data), nothing of A's changes, and A's marker and ids appear in none of B's
 * responses (lists, searches, documents query, context build, B's own workspace).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../helpers/fake-upstream";
import { startTestServer, type TestServer } from "../helpers/server";
import { figure } from "./lib/mode";
import { bodyProperties, fillPath, loadOperations, minimalBody, type Operation } from "./lib/openapi";
import { bodyHints, ROUTES_WITHOUT_OWNER_IDS, WORKSPACE_FIELDS } from "./lib/routes";
import { idFor, leakIn, ownerView, seedTenant, waitForIndex, type Tenant } from "./lib/tenant";

let server: TestServer;
/** The LLM gateway completions go to: what Mnemo injected into B's prompts is read here. */
let upstream: FakeUpstream;
let operations: Operation[];
let alice: Tenant;
let bob: Tenant;
/** Every response B received, scanned for A's secrets at the end. */
const bobSaw: Array<{ route: string; sent: string; status: number; body: unknown }> = [];

async function asBob(method: string, path: string, body?: unknown): Promise<[number, any]> {
  const result = await server.call(method, path, { token: bob.token, body });
  bobSaw.push({
    route: `${method} ${path}`,
    sent: `${method} ${path} ${body === undefined ? "" : JSON.stringify(body)}`,
    status: result[0],
    body: result[1],
  });
  return result;
}

const aliceView = () => ownerView(server.call, operations, alice);

beforeAll(async () => {
  upstream = startFakeUpstream();
  // An hour between extraction attempts: the seeded jobs call the gateway once, while seeding.
  server = await startTestServer({ env: { LLM_GATEWAY_URL: upstream.url, MNEMO_EXTRACTION_RETRY_MS: "3600000" } });
  operations = await loadOperations(server.url);
  alice = await seedTenant(server.call, "iso-alice");
  bob = await seedTenant(server.call, "iso-bob");
  // A proposal of A's, as capture makes them (only a capture's memory model makes one over HTTP).
  for (const tenant of [alice, bob]) {
    const [, memory] = await server.call("GET", `/v1/memories/${tenant.ids.memoryId}`, { token: tenant.token });
    const { memories, store } = server.services;
    tenant.ids.proposalId = await store.transaction((tx) =>
      memories.proposals.propose(
        tx,
        tenant.user,
        memory,
        { action: "update", content: `proposed ${tenant.marker}` },
        { kind: "extraction", model: "memory-model" },
      ),
    );
  }
  // Developer tokens have no route that makes them (the CLI and the identity sync do).
  for (const tenant of [alice, bob])
    tenant.ids.devTokenId = (
      await server.services.credentials.createDevToken({ userId: tenant.user, ttlMs: 3_600_000 })
    ).id;
  await waitForIndex(server.call, alice);
  await waitForIndex(server.call, bob);
  // What reached the gateway from here on is B's doing.
  upstream.requests.length = 0;
});
afterAll(async () => {
  await server?.destroy();
  upstream?.stop();
});

describe("isolation matrix (generated from GET /openapi/json)", () => {
  test("every route is either checked with owner ids or reviewed as taking none", () => {
    const unreviewed = operations
      .filter((op) => !op.pending && !(op.key in ROUTES_WITHOUT_OWNER_IDS))
      .filter((op) => op.pathParams.length === 0 || op.pathParams.some((p) => idFor(alice, op.path, p) === undefined))
      .map(
        (op) =>
          `${op.key}: ${op.pathParams.length === 0 ? "takes no owner id: review it and add it to ROUTES_WITHOUT_OWNER_IDS" : `no fixture for ${op.pathParams.filter((p) => idFor(alice, op.path, p) === undefined).join(", ")}: add one to seedTenant`}`,
      );
    expect(unreviewed).toEqual([]);
  });

  test("B presenting A's ids gets 404 on every route, and A's records are unchanged", async () => {
    const before = await aliceView();
    const failures: string[] = [];
    let probes = 0;
    // DELETE last, so a wrongful delete cannot hide a wrongful read.
    const ordered = [...operations].sort((a, b) => Number(a.method === "DELETE") - Number(b.method === "DELETE"));
    for (const op of ordered) {
      if (op.pending || op.key in ROUTES_WITHOUT_OWNER_IDS || op.pathParams.length === 0) continue;
      // A's ids everywhere, then B's own workspace with A's other ids (the record's
      // workspace must be checked, not only the path's).
      const variants: Array<Record<string, string>> = [
        Object.fromEntries(op.pathParams.map((p) => [p, idFor(alice, op.path, p)!])),
      ];
      if (op.pathParams.includes("workspaceId") && op.pathParams.length > 1)
        variants.push({ ...variants[0], workspaceId: bob.ids.workspaceId });
      for (const values of variants) {
        const hints = {
          ...bodyHints(alice.marker),
          ...Object.fromEntries(WORKSPACE_FIELDS.map((f) => [f, values.workspaceId ?? alice.ids.workspaceId])),
        };
        let path = fillPath(op.path, values);
        if (op.queryParams.some((q) => q.name === "workspace_id"))
          path += `?workspace_id=${encodeURIComponent(alice.ids.workspaceId)}`;
        const [status, body] = await asBob(op.method, path, minimalBody(op.body, hints));
        probes++;
        if (status !== 404 || body?.error?.code !== "not_found")
          failures.push(`${op.key} as ${path}: ${status} ${JSON.stringify(body).slice(0, 200)}`);
      }
    }
    // Routes without path ids that name a workspace in the body or the query.
    for (const op of operations) {
      if (op.pending || op.pathParams.length > 0) continue;
      const fields = bodyProperties(op.body).filter((p) => WORKSPACE_FIELDS.includes(p));
      for (const field of fields) {
        const [status, body] = await asBob(op.method, op.path, {
          ...(minimalBody(op.body, bodyHints(alice.marker)) as object),
          [field]: alice.ids.workspaceId,
        });
        probes++;
        if (status !== 404)
          failures.push(`${op.key} with body ${field}=A's workspace: ${status} ${JSON.stringify(body).slice(0, 200)}`);
      }
    }
    figure("isolation", `${probes} probes with another user's ids, ${failures.length} not 404`);
    expect(failures).toEqual([]);
    expect(await aliceView()).toEqual(before);
  });

  test("A's data appears in none of B's responses (lists, searches, query, context, B's workspace)", async () => {
    for (const op of operations) {
      if (op.pending || op.method === "DELETE") continue;
      const values = Object.fromEntries(op.pathParams.map((p) => [p, idFor(bob, op.path, p)]));
      if (Object.values(values).some((v) => v === undefined)) continue;
      const hints = {
        ...bodyHints(alice.marker, bob.marker),
        ...Object.fromEntries(WORKSPACE_FIELDS.map((f) => [f, bob.ids.workspaceId])),
      };
      const body = op.body ? minimalBody(op.body, hints) : undefined;
      await asBob(op.method, fillPath(op.path, values as Record<string, string>), body);
      // Searches again with every include switched on and no workspace (personal scope).
      if (op.body && bodyProperties(op.body).includes("include")) {
        await asBob(op.method, op.path, {
          ...(minimalBody(op.body, bodyHints(alice.marker, bob.marker)) as object),
          include: { memories: true, notes: true, files: true },
        });
      }
    }
    // B searches with A's marker, A's ids and the shared custom id as queries.
    for (const query of [alice.marker, alice.ids.workspaceId, alice.ids.documentId, "shared-custom-id", "custom"]) {
      await asBob("POST", "/v1/memories/search", { query, limit: 100 });
      await asBob("POST", "/v1/documents/query", {
        query,
        top_k: 100,
        include: { notes: true, memories: true, files: true },
      });
      await asBob("POST", "/v1/context/build", {
        query,
        limit: 50,
        include: { notes: true, memories: true, files: true },
      });
    }
    // Chat injection: B's completions asking for A's marker; what reached the upstream
    // (the system prompt Mnemo built from memories and notes) must hold nothing of A's.
    const completions = operations.some((op) => op.key === "POST /v1/chat/completions" && !op.pending);
    if (completions) {
      for (const extra of [{}, { memory: { workspace_id: bob.ids.workspaceId } }]) {
        await asBob("POST", "/v1/chat/completions", {
          model: "fake",
          messages: [{ role: "user", content: alice.marker }],
          ...extra,
        });
      }
      expect(upstream.requests.length).toBeGreaterThan(0);
      for (const request of upstream.requests) {
        // What B sent reaches the gateway as its last message; memory extraction wraps B's conversation in JSON there (`{"conversation": …}`).
        const last = request.body?.messages?.at(-1);
        const sent =
          typeof last?.content === "string" && last.content.startsWith("{") ? last.content : JSON.stringify(last ?? "");
        bobSaw.push({ route: `upstream ${request.path}`, sent, status: 200, body: request.body });
      }
    }
    if (completions) {
      // The control: B's own memories are injected (so the check above is not vacuous).
      const [status] = await server.call("POST", "/v1/chat/completions", {
        token: bob.token,
        body: { model: "fake", messages: [{ role: "user", content: bob.marker }] },
      });
      expect(status).toBe(200);
      expect(JSON.stringify(upstream.requests.at(-1)?.body?.messages?.[0] ?? "")).toContain(bob.marker);
    }
    const [, custom] = await asBob("GET", "/v1/memories/shared-custom-id");
    expect(custom.content).toBe(`custom ${bob.marker}`);
    const leaks = bobSaw
      .map(({ route, sent, status, body }) => [route, leakIn(alice, body, sent, status >= 400)])
      .filter(([, leak]) => leak);
    figure("isolation", `${bobSaw.length} responses to B scanned for A's marker and ids, ${leaks.length} leaks`);
    expect(leaks).toEqual([]);
  });

  test("a presigned upload URL cannot be turned onto another user's workspace or file", async () => {
    if (!operations.some((op) => op.key === "PUT /v1/workspaces/:workspaceId/files/:key" && !op.pending)) return;
    const [status, upload] = await server.call("POST", `/v1/workspaces/${bob.ids.workspaceId}/files/upload-url`, {
      token: bob.token,
      body: { filename: "b.md", contentType: "text/markdown" },
    });
    expect(status).toBe(200);
    const url = new URL(upload.url);
    const before = await ownerView(server.call, operations, alice);
    const attempts = [
      url.pathname.replace(bob.ids.workspaceId, alice.ids.workspaceId),
      url.pathname.replace(upload.key, alice.ids.key),
      url.pathname.replace(bob.ids.workspaceId, alice.ids.workspaceId).replace(upload.key, alice.ids.key),
    ];
    const answers: number[] = [];
    for (const pathname of attempts) {
      const response = await fetch(`${server.url}${pathname}${url.search}`, {
        method: "PUT",
        headers: { "content-type": "text/markdown" },
        body: "overwrite",
      });
      answers.push(response.status);
      await response.text();
    }
    expect(answers.filter((s) => s < 400)).toEqual([]);
    expect(await ownerView(server.call, operations, alice)).toEqual(before);
  });
});
