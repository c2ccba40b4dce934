import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { itemsSchema } from "../src/search/lance/lance-schema";
import type { RawHit } from "../src/search/lance/lance-schema";
import { LanceStore } from "../src/search/lance/lance-store";
import { textTable } from "../src/search/lance/partitions";
import { mock, startTestServer, type TestServer } from "./helpers/server";
import { waitFor } from "./helpers/wait";

/**
 * Memory searches read item ids from an in-memory map by row id instead of the item_id
 * column (src/search/lance/row-keys.ts). These check that the map answers exactly what the
 * column says, through a table's whole life: cold, loaded, new rows, compaction, a table
 * dropped and created again — seen by this process and by another one — and a table made
 * before row ids were stable.
 */
const servers: TestServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.destroy();
});

const WORDS = ["harbour", "kayak", "locker", "river", "lantern", "garden", "violin", "market"];
const QUERIES = ["harbour kayak", "locker", "river lantern", "garden violin market", "kayak"];
const sentence = (i: number, tag: string) =>
  `${tag} note ${i}: the ${WORDS[i % 8]} by the ${WORDS[(i * 3 + 1) % 8]} and ${WORDS[(i * 5 + 2) % 8]}`;

type Keyed = Array<[string, number]>;
const keyed = (hits: RawHit[]): Keyed =>
  hits.map((h): [string, number] => [h.item_id, h._score ?? 0]).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));

/** The map's answer and the column's answer for every query, on one store. */
async function both(lance: LanceStore, table: string) {
  const byMap: Keyed[] = [];
  const byColumn: Keyed[] = [];
  for (const query of QUERIES) {
    byMap.push(keyed(await lance.searchText(table, null, query, 40, { context: false, memories: true })));
    // The mixed-table path reads kind, source and item back from their columns.
    byColumn.push(keyed(await lance.searchText(table, null, query, 40, { context: false, memories: false })));
  }
  return { byMap, byColumn };
}

const heldRows = (lance: LanceStore) => (lance as unknown as { rowKeys: { size: number } }).rowKeys.size;
/** Whether the map has seen the table's row ids differ from their addresses. */
const stableIds = (lance: LanceStore, table: string) =>
  (lance as unknown as { rowKeys: { tables: Map<string, { stable: boolean }> } }).rowKeys.tables.get(table)?.stable;

async function mapLoaded(lance: LanceStore, atLeast: number) {
  await waitFor(() => heldRows(lance) >= atLeast, { what: `the row-key map to hold ${atLeast} rows`, everyMs: 10 });
}

async function write(server: TestServer, user: string, from: number, count: number, tag: string) {
  for (let i = from; i < from + count; i++) {
    const [status] = await server.call("POST", "/v1/memories", {
      token: mock(user),
      body: { id: `${tag}-${i}`, content: sentence(i, tag) },
    });
    expect(status).toBe(201);
  }
  await server.services.indexer.drain();
}

describe("memory search by row address", () => {
  test("answers the ids and scores the item_id column holds: cold, loaded, after new rows and after compaction", async () => {
    const server = await startTestServer();
    servers.push(server);
    const lance = server.services.search.internals.lance;
    const table = textTable("rk", "mem");
    await write(server, "rk", 0, 40, "a");

    const cold = await both(lance, table);
    expect(cold.byMap.flat().length).toBeGreaterThan(QUERIES.length);
    expect(cold.byMap).toEqual(cold.byColumn);
    await mapLoaded(lance, 40);
    expect((await both(lance, table)).byMap).toEqual(cold.byColumn);

    // New rows land in a new fragment the map does not hold yet; then deletions.
    await write(server, "rk", 40, 25, "a");
    for (const i of [3, 17, 44])
      expect((await server.call("DELETE", `/v1/memories/a-${i}`, { token: mock("rk") }))[0]).toBe(200);
    await server.services.indexer.drain();
    const grown = await both(lance, table);
    expect(grown.byMap).toEqual(grown.byColumn);
    expect(grown.byMap.flat().some(([id]) => id === "a-3")).toBe(false);
    await mapLoaded(lance, 60);
    expect((await both(lance, table)).byMap).toEqual(grown.byColumn);

    // Compaction rewrites the rows into new fragments (new addresses); their row ids stay,
    // and so does the map.
    const held = heldRows(lance);
    expect(stableIds(lance, table)).toBe(true);
    await server.services.indexer.settle();
    expect(heldRows(lance)).toBe(held);
    const compacted = await both(lance, table);
    expect(compacted.byMap).toEqual(compacted.byColumn);
    expect(compacted.byMap.flat().length).toBeGreaterThan(QUERIES.length);
  }, 60_000);

  test("a bulk write's rows are known before any search: the writer's child reports the ids of the rows it adds", async () => {
    // Written while no process writes the index, then taken in by the next one as one batch.
    const first = await startTestServer({ env: { MNEMO_INDEX_WRITER: "never" } });
    for (let i = 0; i < 100; i++)
      expect(
        (await first.call("POST", "/v1/memories", { token: mock("rk4"), body: { content: sentence(i, "bulk") } }))[0],
      ).toBe(201);
    await first.stop();
    const server = await startTestServer({ dataDir: first.dataDir });
    servers.push(server);
    await server.services.indexer.drain();
    const lance = server.services.search.internals.lance;
    expect(heldRows(lance)).toBe(100);
    const table = textTable("rk4", "mem");
    const found = await both(lance, table);
    expect(found.byMap).toEqual(found.byColumn);
    expect(found.byMap.flat().length).toBeGreaterThan(QUERIES.length);
  }, 60_000);

  test("a table made without stable row ids (before they were used) is searched by address, compactions included", async () => {
    const server = await startTestServer();
    servers.push(server);
    const lance = server.services.search.internals.lance;
    const table = textTable("rk3", "mem");
    // The table as an earlier version made it: row ids that are addresses.
    const db = await lancedb.connect(join(server.dataDir, "index"));
    (await db.createEmptyTable(table, itemsSchema())).close();
    db.close();
    await write(server, "rk3", 0, 30, "a");
    await write(server, "rk3", 30, 20, "a");
    const grown = await both(lance, table);
    expect(grown.byMap).toEqual(grown.byColumn);
    expect(grown.byMap.flat().length).toBeGreaterThan(QUERIES.length);
    expect(stableIds(lance, table)).toBe(false);
    // Loaded by id ranges, which are addresses here.
    await mapLoaded(lance, 50);
    expect((await both(lance, table)).byMap).toEqual(grown.byColumn);

    // Every row moves to a new address: the map is read again, and answers as the column does.
    await server.services.indexer.settle();
    const compacted = await both(lance, table);
    expect(compacted.byMap).toEqual(compacted.byColumn);
    await mapLoaded(lance, 50);
    expect((await both(lance, table)).byMap).toEqual(compacted.byColumn);
  }, 60_000);

  test("a table dropped and created again is another table, in this process and in a reader process", async () => {
    const server = await startTestServer();
    servers.push(server);
    const table = textTable("rk2", "mem");
    await write(server, "rk2", 0, 30, "old");
    // Another process reading the same index (a replica), checking for new versions at every
    // read: it never uses the map (it cannot know of a drop before the writer says so).
    const reader = await LanceStore.open({ uri: join(server.dataDir, "index"), readConsistencySeconds: 0 });
    try {
      await both(reader, table);
      await both(server.services.search.internals.lance, table);
      await mapLoaded(server.services.search.internals.lance, 30);
      expect(heldRows(reader)).toBe(0);

      // Deleting every memory drops the partition; new memories create it again, with
      // fragment ids starting over: the same addresses now hold other items.
      for (let i = 0; i < 30; i++) await server.call("DELETE", `/v1/memories/old-${i}`, { token: mock("rk2") });
      await server.services.indexer.drain();
      await write(server, "rk2", 0, 30, "new");

      for (const lance of [server.services.search.internals.lance, reader]) {
        const again = await both(lance, table);
        expect(again.byMap).toEqual(again.byColumn);
        expect(again.byMap.flat().length).toBeGreaterThan(QUERIES.length);
        expect(again.byMap.flat().every(([id]) => id.startsWith("new-"))).toBe(true);
      }
      const [, body] = await server.call("POST", "/v1/memories/search", {
        token: mock("rk2"),
        body: { query: "harbour kayak" },
      });
      expect(body.results.length).toBeGreaterThan(0);
      expect(
        body.results.every(
          (r: { id: string; content: string }) => r.id.startsWith("new-") && r.content.startsWith("new note"),
        ),
      ).toBe(true);
    } finally {
      await reader.close();
    }
  }, 60_000);
});
