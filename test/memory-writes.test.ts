import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { all, sql } from "../src/db/store";
import { importFile } from "../src/transfer/import";
import { refOf, remember } from "./helpers/capture";
import { startFakeUpstream, type FakeUpstream } from "./helpers/fake-upstream";
import { callTool, connectMcpHttp, ok } from "./helpers/mcp";
import { mock, startTestServer, type TestServer } from "./helpers/server";

/**
 * Every way a memory is written leaves the search index as an API write does: the memory
 * and the memories of its conversation that carry its text as context are indexed again,
 * so their full-text rows and the owner's term statistics equal a re-index from the store.
 */
let fake: FakeUpstream;
let server: TestServer;
beforeAll(async () => {
  fake = startFakeUpstream();
  server = await startTestServer({ env: { LLM_GATEWAY_URL: fake.url, MNEMO_MEMORY_MODEL: "memory-model" } });
});
afterAll(async () => {
  await server.destroy();
  fake.stop();
});

/** What the index writer keeps for an owner's memories: each item's terms and context terms, and the owner's statistics. */
async function indexState(user: string) {
  const db = server.services.store.db;
  await server.services.indexer.drain();
  return {
    terms: await all(
      db,
      sql`SELECT source_id, item_id, grp, terms, context FROM search_terms WHERE owner_id = ${user} AND kind = 'memory' ORDER BY source_id, item_id`,
    ),
    df: await all(db, sql`SELECT grp, term, df FROM search_df WHERE owner_id = ${user} AND df <> 0 ORDER BY grp, term`),
    corpus: await all(db, sql`SELECT grp, items, length FROM search_corpus WHERE owner_id = ${user} ORDER BY grp`),
  };
}

/** The owner's index state as a re-index of all their memories from the store makes it. */
async function reindexed(user: string) {
  const { store, outbox } = server.services;
  const [, list] = await server.call("GET", "/v1/memories?limit=1000", { token: mock(user) });
  await store.transaction((tx) =>
    outbox.enqueueMany(
      tx,
      list.data.map((m: { id: string }) => ({ ownerId: user, kind: "memory" as const, sourceId: m.id })),
      "sync",
    ),
  );
  return indexState(user);
}

/** Memories A, B, C of one conversation, indexed; their ids. */
async function conversation(user: string): Promise<string[]> {
  const ids = [];
  for (const text of [
    "Alpha the user adopted a parrot",
    "Bravo the parrot is called Kiwi",
    "Charlie the parrot eats sunflower seeds",
  ]) {
    ids.push(await remember(server, user, text, { session_id: "s1" }));
  }
  await server.services.indexer.drain();
  return ids;
}

describe("the index after a write equals a re-index, whichever path wrote", () => {
  test("API update and delete", async () => {
    const [, b] = await conversation("w-api");
    expect(
      (
        await server.call("PATCH", `/v1/memories/${b}`, {
          token: mock("w-api"),
          body: { content: "Bravo the parrot is called Mango" },
        })
      )[0],
    ).toBe(200);
    const after = await indexState("w-api");
    expect(after).toEqual(await reindexed("w-api"));
    expect((await server.call("DELETE", `/v1/memories/${b}`, { token: mock("w-api") }))[0]).toBe(200);
    expect(await indexState("w-api")).toEqual(await reindexed("w-api"));
  });

  test("extraction's update and delete (POST /v1/memories/extract)", async () => {
    const [a, b] = await conversation("w-ext");
    const decide = (action: "update" | "delete", text: string) => (body: any) => ({
      decisions: [
        {
          fact: 0,
          action,
          ref: refOf(JSON.parse(body.messages[1].content).facts, 0, text),
          ...(action === "update" ? { content: "Bravo the parrot is called Mango" } : {}),
        },
      ],
    });
    fake.script.push({ facts: ["The parrot is called Mango"] }, decide("update", "Kiwi"));
    const [status, body] = await server.call("POST", "/v1/memories/extract", {
      token: mock("w-ext"),
      body: { messages: [{ role: "user", content: "Kiwi is called Mango now." }] },
    });
    expect([status, body.decisions[0].action, body.decisions[0].memoryId]).toEqual([200, "update", b]);
    expect(await indexState("w-ext")).toEqual(await reindexed("w-ext"));
    fake.script.push({ facts: ["The user gave the parrot away"] }, decide("delete", "adopted"));
    const [, removed] = await server.call("POST", "/v1/memories/extract", {
      token: mock("w-ext"),
      body: { messages: [{ role: "user", content: "We gave the parrot away." }] },
    });
    expect([removed.decisions[0].action, removed.decisions[0].memoryId]).toEqual(["delete", a]);
    expect(await indexState("w-ext")).toEqual(await reindexed("w-ext"));
  });

  test("MCP forget", async () => {
    const [, b] = await conversation("w-mcp");
    const { client } = await connectMcpHttp(server.url, mock("w-mcp"));
    try {
      expect(ok(await callTool(client, "forget", { id: b }))).toEqual({ id: b, deleted: true });
    } finally {
      await client.close();
    }
    expect(await indexState("w-mcp")).toEqual(await reindexed("w-mcp"));
  });

  test("import into an existing conversation", async () => {
    await conversation("w-imp");
    const file = join(server.dataDir, "more.jsonl");
    writeFileSync(file, `${JSON.stringify({ content: "Delta the parrot sings at dawn", session_id: "s1" })}\n`);
    const { store, outbox, config } = server.services;
    const report = await importFile({ store, outbox, config }, file, { userId: "w-imp" });
    expect([report.inserted, report.failed]).toEqual([1, 0]);
    expect(await indexState("w-imp")).toEqual(await reindexed("w-imp"));
  });
});
