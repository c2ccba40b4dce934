import { afterAll, describe, expect, test } from "bun:test";
import { textTable } from "../src/search/lance/partitions";
import { TEST_DATABASE_URL } from "./helpers/database";
import { fragmentCount, unindexedRows } from "./helpers/index-rows";
import { mock, startTestServer, tempDir, type TestServer } from "./helpers/server";
import { waitFor, waitUntil } from "./helpers/wait";

const servers: TestServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.destroy();
});

/** Only the searches' cost can compact here: no fragment bound within reach, no idle optimize. */
const NO_OTHER_COMPACTION = { MNEMO_INDEX_MAX_FRAGMENTS: "1000", MNEMO_INDEX_IDLE_OPTIMIZE_MS: "600000" };

/** The table's fragment count once it is below `than` (a compaction happened). */
async function fragmentsOnceBelow(dataDir: string, table: string, than: number): Promise<number> {
  return waitUntil(
    () => fragmentCount(dataDir, table),
    (fragments) => fragments < than,
    { what: `${table} to be compacted below ${than} fragments`, everyMs: 50 },
  );
}

async function search(server: TestServer, user: string, query: string) {
  // Full text alone: these tests count what the index's text holds, not the word vectors' neighbours.
  const [status, body] = await server.call("POST", "/v1/memories/search", {
    token: mock(user),
    body: { query, signals: ["text"], limit: 20 },
  });
  expect(status).toBe(200);
  return body.results as Array<{ content: string }>;
}

/** One commit, so one fragment, per memory: each write is indexed before the next. */
async function writeOneByOne(server: TestServer, user: string, texts: string[]) {
  for (const content of texts) {
    await server.call("POST", "/v1/memories", { token: mock(user), body: { content } });
    await server.services.indexer.drain();
    expect(await search(server, user, content)).not.toHaveLength(0);
  }
}

describe("compaction paid for by searches", () => {
  test("a table whose unindexed rows searches scan flat (written before this server started) is compacted once they cost what compacting does; one written alike but not searched keeps its fragments", async () => {
    const first = await startTestServer({ env: NO_OTHER_COMPACTION });
    for (const user of ["busy", "quiet"])
      await writeOneByOne(
        first,
        user,
        Array.from({ length: 10 }, (_, i) => `harbour log entry ${i} for ${user}`),
      );
    await first.stop();
    // This server did not write those rows: its searches cannot hold them, and scan them.
    const server = await startTestServer({ dataDir: first.dataDir, env: NO_OTHER_COMPACTION });
    servers.push(server);
    const quietBefore = await fragmentCount(server.dataDir, textTable("quiet", "mem"));
    expect(quietBefore).toBeGreaterThanOrEqual(10);
    // Thirty searches, each scanning the ten fragments outside the index.
    for (let i = 0; i < 30; i++) expect(await search(server, "busy", "harbour log")).toHaveLength(10);
    // The next commit is where the writer weighs compaction.
    for (const user of ["busy", "quiet"]) {
      await server.call("POST", "/v1/memories", {
        token: mock(user),
        body: { content: `harbour log closing entry for ${user}` },
      });
      await server.services.indexer.drain();
      expect((await search(server, user, "closing")).map((r) => r.content)).toEqual([
        `harbour log closing entry for ${user}`,
      ]);
    }
    expect(await fragmentCount(server.dataDir, textTable("busy", "mem"))).toBeLessThanOrEqual(2);
    expect(await fragmentCount(server.dataDir, textTable("quiet", "mem"))).toBeGreaterThan(quietBefore);
    // Compaction changed nothing a search answers.
    expect(await search(server, "busy", "harbour log")).toHaveLength(11);
  }, 60_000);

  test("searches that hold a table's unindexed rows among their pending items (the writer wrote them) pay for holding them, not for a scan, unless replicas may scan them (PostgreSQL): the embedded server leaves the table as it is, and every row is found", async () => {
    const server = await startTestServer({ env: NO_OTHER_COMPACTION });
    servers.push(server);
    await writeOneByOne(
      server,
      "held",
      Array.from({ length: 10 }, (_, i) => `harbour log entry ${i} for held`),
    );
    const table = textTable("held", "mem");
    const before = await fragmentCount(server.dataDir, table);
    expect(before).toBeGreaterThanOrEqual(10);
    // The searches that compacted the flat-scanned table above.
    for (let i = 0; i < 30; i++) expect(await search(server, "held", "harbour log")).toHaveLength(10);
    await server.call("POST", "/v1/memories", { token: mock("held"), body: { content: "harbour log closing entry" } });
    await server.services.indexer.drain();
    const after = await fragmentCount(server.dataDir, table);
    if (TEST_DATABASE_URL) expect(after).toBeLessThanOrEqual(2);
    else expect(after).toBeGreaterThan(before);
    expect(await search(server, "held", "harbour log")).toHaveLength(11);
  }, 60_000);
});

describe("a bulk write", () => {
  test("keeps the rows outside a table's full-text index bounded (2,000, or a tenth of the table): the first search after it has that much at most to take in, and finds every row", async () => {
    const server = await startTestServer({ env: NO_OTHER_COMPACTION });
    servers.push(server);
    const texts = Array.from({ length: 2_600 }, (_, i) => `bulk harbour entry ${i} about lantern ${i % 50}`);
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = next++; i < texts.length; i = next++) {
          const [status] = await server.call("POST", "/v1/memories", {
            token: mock("bulk"),
            body: { content: texts[i] },
          });
          expect(status).toBe(201);
        }
      }),
    );
    await server.services.indexer.drain();
    // No fragment bound within reach, no idle optimize, no search: the rows' number alone compacted it.
    expect(await unindexedRows(server.dataDir, textTable("bulk", "mem"))).toBeLessThan(2_000);
    expect(await search(server, "bulk", "bulk harbour entry 0 about lantern 0")).not.toHaveLength(0);
    expect((await search(server, "bulk", "lantern 49")).length).toBe(20);
  }, 120_000);
});

describe("idle optimize", () => {
  test("compacts what was written once writes pause (MNEMO_INDEX_IDLE_OPTIMIZE_MS), then hands freed memory back, and the server answers as before", async () => {
    // 1.5 s: the four writes below land well within it, so the optimize comes after them all.
    const server = await startTestServer({
      env: { MNEMO_INDEX_MAX_FRAGMENTS: "1000", MNEMO_INDEX_IDLE_OPTIMIZE_MS: "1500" },
    });
    servers.push(server);
    for (let i = 0; i < 4; i++) {
      await server.call("POST", "/v1/memories", { token: mock("idle"), body: { content: `tide table note ${i}` } });
      await server.services.indexer.drain();
      expect(await search(server, "idle", `note ${i}`)).not.toHaveLength(0);
    }
    const table = textTable("idle", "mem");
    // One fragment per commit, nothing compacted yet (too few searches to pay for it).
    const written = await fragmentCount(server.dataDir, table);
    expect(written).toBeGreaterThanOrEqual(3);
    expect(await fragmentsOnceBelow(server.dataDir, table, written)).toBeLessThan(written);
    expect(await search(server, "idle", "tide table")).toHaveLength(4);
  }, 30_000);

  test("then renews the LanceDB connection (which loads each compacted table's new index), and searches and writes carry on through the new one", async () => {
    const server = await startTestServer({
      env: { MNEMO_INDEX_MAX_FRAGMENTS: "1000", MNEMO_INDEX_IDLE_OPTIMIZE_MS: "300" },
    });
    servers.push(server);
    const lance = server.services.search.internals.lance;
    const connection = () => (lance as unknown as { connection: object }).connection;
    const table = textTable("renew", "mem");
    for (let round = 0; round < 2; round++) {
      const before = connection();
      const material = ["osier", "rattan"][round];
      for (let i = 0; i < 3; i++) {
        await server.call("POST", "/v1/memories", {
          token: mock("renew"),
          body: { content: `${material} basket weave ${i}` },
        });
        await server.services.indexer.drain();
      }
      expect(await search(server, "renew", material)).toHaveLength(3);
      expect(await fragmentsOnceBelow(server.dataDir, table, 3)).toBeLessThanOrEqual(2);
      // The writes may be far enough apart (a loaded machine) for an idle optimize to run
      // between them: the connection then changes more than once, and a renewal still to
      // come would retire the handle the search below opens. Waiting for the optimizer to
      // have nothing left makes this round's last renewal the one observed.
      await waitFor(() => connection() !== before && server.services.indexer.idleOptimizeSettled, {
        what: "LanceDB's connection to be recycled, nothing left to optimize",
      });
      expect(lance.indexUpdatesSinceRecycle).toBe(0);
      // The table is opened again through the new connection, by searches and writes alike.
      expect(await search(server, "renew", "basket")).toHaveLength(3 * round + 3);
      expect(lance.openTableCount).toBe(1);
    }
    await server.call("POST", "/v1/memories", { token: mock("renew"), body: { content: "a willow hoop" } });
    expect((await search(server, "renew", "willow")).map((r) => r.content)).toEqual(["a willow hoop"]);
  }, 60_000);
});

describe("a table left untidy by a stop", () => {
  test("is looked at by the next server once searched, and compacted when idle (a restart no longer leaves every search scanning it flat)", async () => {
    const first = await startTestServer({ env: NO_OTHER_COMPACTION });
    for (let i = 0; i < 4; i++) {
      await first.call("POST", "/v1/memories", {
        token: mock("restarted"),
        body: { content: `lighthouse keeper note ${i}` },
      });
      await first.services.indexer.drain();
      expect(await search(first, "restarted", `note ${i}`)).not.toHaveLength(0);
    }
    const table = textTable("restarted", "mem");
    const written = await fragmentCount(first.dataDir, table);
    expect(written).toBeGreaterThanOrEqual(3);
    await first.stop();
    const second = await startTestServer({
      dataDir: first.dataDir,
      env: { MNEMO_INDEX_MAX_FRAGMENTS: "1000", MNEMO_INDEX_IDLE_OPTIMIZE_MS: "1500" },
    });
    servers.push(second);
    // Nothing was written by this server: only the search tells it about the table.
    expect(await search(second, "restarted", "lighthouse keeper")).toHaveLength(4);
    expect(await fragmentsOnceBelow(second.dataDir, table, written)).toBeLessThan(written);
    expect(await search(second, "restarted", "lighthouse keeper")).toHaveLength(4);
  }, 30_000);
});

describe("a compacted table is searched through its index alone", () => {
  test("until the next write: a write right after compaction is found at once (the flat scan of new rows comes back with it)", async () => {
    const server = await startTestServer({
      env: { MNEMO_INDEX_MAX_FRAGMENTS: "1000", MNEMO_INDEX_IDLE_OPTIMIZE_MS: "300" },
    });
    servers.push(server);
    const table = textTable("tidy", "mem");
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 3; i++) {
        await server.call("POST", "/v1/memories", {
          token: mock("tidy"),
          body: { content: `orchard ledger ${round} line ${i}` },
        });
        await server.services.indexer.drain();
      }
      expect(await search(server, "tidy", `orchard ledger ${round}`)).toHaveLength(3 * round + 3);
      // Compacted when idle: every row in the index, nothing written since.
      expect(await fragmentsOnceBelow(server.dataDir, table, 3)).toBeLessThanOrEqual(2);
      // Searches now skip the flat scan; the next write must bring it back for its own search.
      expect(await search(server, "tidy", "orchard")).toHaveLength(3 * round + 3);
      await server.call("POST", "/v1/memories", { token: mock("tidy"), body: { content: `quince note ${round}` } });
      // Indexed first, so this search finds it through LanceDB's flat scan, not as a pending write.
      await server.services.indexer.drain();
      expect((await search(server, "tidy", `quince ${round}`)).map((r) => r.content)).toContain(`quince note ${round}`);
    }
  }, 60_000);
});

describe("read-your-writes by kind", () => {
  test("a memory search counts as lag only memories (a document's pending blocks are not its business), and finds the pending memory", async () => {
    const server = await startTestServer();
    servers.push(server);
    const [, ws] = await server.call("POST", "/v1/workspaces", { body: { name: "lag" } });
    // No index writer from here on: whatever is written stays pending.
    await server.services.indexer.stop();
    expect((await server.call("POST", "/v1/memories", { body: { content: "pending memory about lanterns" } }))[0]).toBe(
      201,
    );
    const markdown = Array.from({ length: 5 }, (_, i) => `Paragraph ${i} about lanterns.`).join("\n\n");
    expect(
      (await server.call("POST", "/v1/documents", { body: { workspace_id: ws.id, title: "Lanterns", markdown } }))[0],
    ).toBe(201);
    expect((await server.services.indexer.stats()).pendingText).toBeGreaterThan(1);
    const response = await fetch(`${server.url}/v1/memories/search`, {
      method: "POST",
      headers: { authorization: `Bearer ${mock("alice")}`, "content-type": "application/json" },
      body: JSON.stringify({ query: "lanterns" }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-svc-index-lag")).toBe("1");
    expect(((await response.json()) as { results: Array<{ content: string }> }).results.map((r) => r.content)).toEqual([
      "pending memory about lanterns",
    ]);
  });
});

describe("many users' interleaved backlogs", () => {
  test("each user's backlog goes into their table in one commit, however their writes interleave, and every write is found", async () => {
    const dataDir = tempDir("mnemo-dense-");
    const users = Array.from({ length: 80 }, (_, i) => `dense-u${i}`);
    // No index writer while the users write: their rows wait on the outbox, interleaved.
    const writing = await startTestServer({ dataDir, env: { MNEMO_INDEX_WRITER: "never" } });
    for (const round of ["harbour", "lantern"])
      for (const user of users) {
        const [status] = await writing.call("POST", "/v1/memories", {
          token: mock(user),
          body: { content: `${user} ${round} note` },
        });
        expect(status).toBe(201);
      }
    await writing.stop();
    // A batch of 100 rows: the oldest 100 hold every user's first row and 20 users' second.
    const server = await startTestServer({ dataDir, env: { ...NO_OTHER_COMPACTION, MNEMO_INDEX_BATCH: "100" } });
    servers.push(server);
    await waitFor(async () => (await server.services.indexer.stats()).pendingText === 0, {
      what: "the backlog to be indexed",
    });
    const fragments = await Promise.all(users.map((user) => fragmentCount(dataDir, textTable(user, "mem"))));
    expect(fragments).toEqual(users.map(() => 1));
    for (const user of [users[0], users[79]])
      expect((await search(server, user, "lantern harbour")).map((hit) => hit.content).sort()).toEqual([
        `${user} harbour note`,
        `${user} lantern note`,
      ]);
  });
});

describe("after a compaction", () => {
  test("the new full-text index of a table being searched is loaded before the next search asks; a table nobody searches is left alone; both answer every row", async () => {
    const server = await startTestServer({ env: { MNEMO_INDEX_IDLE_OPTIMIZE_MS: "600000" } });
    servers.push(server);
    const { lance } = server.services.search.internals;
    const write = async (user: string, from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const [status] = await server.call("POST", "/v1/memories", {
          token: mock(user),
          body: { content: `harbour log ${i} of the lantern keeper` },
        });
        expect(status).toBe(201);
      }
      await server.services.indexer.drain();
    };
    for (const user of ["seen", "unseen"]) await write(user, 0, 8);
    await lance.warmed();
    const loads = lance.fullTextIndexLoads;
    await lance.optimize([textTable("unseen", "mem")], 60_000);
    await lance.warmed();
    expect(lance.fullTextIndexLoads).toBe(loads);
    // Searched just now (well within the 10 s that count as being searched).
    expect(await search(server, "seen", "harbour lantern")).toHaveLength(8);
    await lance.optimize([textTable("seen", "mem")], 60_000);
    await lance.warmed();
    expect(lance.fullTextIndexLoads).toBe(loads + 1);
    for (const user of ["seen", "unseen"]) {
      expect(await unindexedRows(server.dataDir, textTable(user, "mem"))).toBe(0);
      expect(await search(server, user, "harbour lantern")).toHaveLength(8);
    }
  }, 60_000);
});
