import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import pg from "pg";
import { createGate } from "../src/http/large-bodies";
import { databaseUrlFor, TEST_DATABASE_URL } from "./helpers/database";
import { startTestServer, type TestServer } from "./helpers/server";
import { waitFor } from "./helpers/wait";
import { createWorkspace } from "./helpers/workspaces";

/**
 * Large bodies (1 MB and more) are handled one at a time per server, so one user's
 * several 9 MB PATCHes do not hold everyone else's requests behind all of their work; small
 * requests never wait for the gate.
 */
const backend = TEST_DATABASE_URL ? "PostgreSQL" : "the embedded store";
const largeMarkdown = (tag: string) =>
  Array.from(
    { length: 20_000 },
    (_, i) => `Paragraph ${i} of ${tag}: the quick brown fox jumps over the lazy dog.`,
  ).join("\n\n");

describe("the large-body gate", () => {
  test("lets `capacity` through, and the others in arrival order as places are released", async () => {
    const gate = createGate(1);
    const order: string[] = [];
    const first = await gate.acquire();
    const waiters = ["b", "c"].map((name) =>
      gate.acquire().then((release) => {
        order.push(name);
        return release;
      }),
    );
    expect(gate.state()).toEqual({ active: 1, waiting: 2 });
    first();
    first(); // a second release of the same place changes nothing
    const b = await waiters[0];
    expect([order, gate.state()]).toEqual([["b"], { active: 1, waiting: 1 }]);
    b();
    (await waiters[1])();
    expect([order, gate.state()]).toEqual([["b", "c"], { active: 0, waiting: 0 }]);
  });
});

describe(`large bodies over HTTP on ${backend}`, () => {
  let server: TestServer;
  let ws: string;
  const create = async (title: string) =>
    (await server.call("POST", "/v1/documents", { body: { workspace_id: ws, title } }))[1].document.id as string;
  const patch = (id: string, body: Record<string, unknown>) =>
    fetch(`${server.url}/v1/documents/${id}`, {
      method: "PATCH",
      headers: { authorization: "Bearer mock-token-alice", "content-type": "application/json" },
      body: JSON.stringify({ workspace_id: ws, ...body }),
    });
  beforeAll(async () => {
    server = await startTestServer();
    ws = await createWorkspace(server, "Large");
  });
  afterAll(() => server.destroy());

  test("a large body refused (malformed, unknown document, bad field) gives its place back: the next one is handled", async () => {
    const id = await create("Target");
    const big = largeMarkdown("refused");
    const malformed = await fetch(`${server.url}/v1/documents/${id}`, {
      method: "PATCH",
      headers: { authorization: "Bearer mock-token-alice", "content-type": "application/json" },
      body: `{"markdown": "${"x".repeat(2 * 1024 * 1024)}"`,
    });
    expect(malformed.status).toBe(400);
    expect((await patch("doc_missing", { markdown: big })).status).toBe(404);
    expect((await patch(id, { markdown: big, title: "   " })).status).toBe(400);
    const done = await patch(id, { markdown: big });
    expect([
      done.status,
      (await server.call("GET", `/v1/workspaces/${ws}/documents/${id}`))[1].markdown.length,
    ]).toEqual([200, big.length]);
  });

  test.skipIf(!TEST_DATABASE_URL)(
    "while one large PATCH is held, a second waits for it, and a small one is answered before both",
    async () => {
      const [held, queued, small] = [await create("Held"), await create("Queued"), await create("Small")];
      // The attacker's stand-in: a transaction holding the first document's row, so its PATCH stays inside the gate.
      const client = new pg.Client({ connectionString: await databaseUrlFor(server.dataDir) });
      await client.connect();
      const finished: string[] = [];
      try {
        await client.query("BEGIN");
        await client.query("SELECT id FROM documents WHERE id = $1 FOR UPDATE", [held]);
        const first = patch(held, { markdown: largeMarkdown("held") }).then((r) => {
          finished.push("held");
          return r.status;
        });
        await waitFor(
          async () =>
            (
              await client.query(
                "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
              )
            ).rowCount! > 0 || null,
          { what: "the held PATCH to wait on the row lock" },
        );
        const second = patch(queued, { markdown: largeMarkdown("queued") }).then((r) => {
          finished.push("queued");
          return r.status;
        });
        expect((await patch(small, { markdown: "a small edit" })).status).toBe(200);
        finished.push("small");
        await client.query("COMMIT");
        expect([await first, await second, finished]).toEqual([200, 200, ["small", "held", "queued"]]);
      } finally {
        await client.end();
      }
    },
  );
});
