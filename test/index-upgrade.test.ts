import { afterAll, expect, test } from "bun:test";
import * as lancedb from "@lancedb/lancedb";
import { Field, FixedSizeList, Float32, Precision, Schema } from "apache-arrow";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { run, sql } from "../src/db/store";
import { rowsTable } from "../src/search/lance/arrow-write";
import { fullTextIndex, itemsSchema, WORD_VECTOR_DIMS } from "../src/search/lance/lance-schema";
import { runCli } from "./helpers/cli";
import { dropDatabaseFor } from "./helpers/database";
import { indexRows, indexTables } from "./helpers/index-rows";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

const dir = tempDir("mnemo-upgrade-");
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropDatabaseFor(dir);
});

const layout = async () => {
  const result = await runCli(["doctor", "--json", "--data", dir], { NO_COLOR: "1" });
  return JSON.parse(result.stdout).checks.find((c: { name: string }) => c.name === "index layout");
};

test("an index of an older layout: doctor says so and what happens; the next start rebuilds it, and searches stay complete", async () => {
  const first = await startTestServer({ dataDir: dir });
  const [, memory] = await first.call("POST", "/v1/memories", { body: { content: "the allotment gate code is 4711" } });
  await first.services.indexer.drain();
  expect((await layout()).status).toBe("ok");
  // As an older Mnemo would have left it.
  await run(first.services.store.db, sql`UPDATE settings SET value = '6' WHERE key = 'index_schema'`);
  await first.stop();

  expect(await layout()).toMatchObject({
    status: "warn",
    detail: expect.stringContaining("version 6"),
    hint: expect.stringContaining("mnemo reindex"),
  });
  const second = await startTestServer({ dataDir: dir });
  // Found at once, rebuilt or not: every source is pending until the writer has indexed it again.
  const [, found] = await second.call("POST", "/v1/memories/search", { body: { query: "allotment gate" } });
  expect(found.results.map((r: { id: string }) => r.id)).toEqual([memory.id]);
  await second.services.indexer.drain();
  await second.stop();
  expect((await layout()).status).toBe("ok");
});

/** The element type of a table's word-vector column ("Float16" or "Float32"). */
async function wordVectorType(dataDir: string, table: string): Promise<string> {
  const db = await lancedb.connect(join(dataDir, "index"));
  try {
    const handle = await db.openTable(table);
    const type = (await handle.schema()).fields.find((field) => field.name === "wvec")!.type as FixedSizeList;
    handle.close();
    return type.valueType.precision === Precision.HALF ? "Float16" : "Float32";
  } finally {
    db.close();
  }
}

/** Makes a table again as an earlier Mnemo wrote it: the same rows, its word vectors as 32-bit floats. */
async function asThirtyTwoBit(dataDir: string, table: string): Promise<void> {
  const db = await lancedb.connect(join(dataDir, "index"));
  try {
    const handle = await db.openTable(table);
    const rows = (await handle.query().toArray()).map((row) => ({
      ...row,
      meta: [...row.meta],
      wvec: Float32Array.from(row.wvec),
    }));
    handle.close();
    const schema = new Schema(
      itemsSchema().fields.map((field) =>
        field.name === "wvec"
          ? new Field("wvec", new FixedSizeList(WORD_VECTOR_DIMS, new Field("item", new Float32(), true)), false)
          : field,
      ),
    );
    const old = await db.createTable(table, await rowsTable(schema, rows), { mode: "overwrite" });
    await old.createIndex("text", { config: fullTextIndex() });
    old.close();
  } finally {
    db.close();
  }
}

test("word vectors are half floats in new tables; a table an earlier version made with 32-bit ones takes new rows as they are and stays searchable", async () => {
  const dataDir = tempDir("mnemo-upgrade-wvec-");
  try {
    const first = await startTestServer({ dataDir });
    const search = async (server: TestServer, query: string, signals: string[]) => {
      const [status, body] = await server.call("POST", "/v1/memories/search", { body: { query, signals, limit: 10 } });
      expect(status).toBe(200);
      return (body.results as Array<{ content: string }>).map((r) => r.content).sort();
    };
    await first.call("POST", "/v1/memories", { body: { content: "the ferry to the island leaves at dawn" } });
    await first.services.indexer.drain();
    const [table] = (await indexTables(dataDir)).filter((name) => !name.includes("__v_"));
    expect(await wordVectorType(dataDir, table)).toBe("Float16");
    await first.stop();

    await asThirtyTwoBit(dataDir, table);
    const second = await startTestServer({ dataDir });
    await second.call("POST", "/v1/memories", { body: { content: "a boat crossing to the harbour in the morning" } });
    await second.services.indexer.drain();
    expect(await wordVectorType(dataDir, table)).toBe("Float32");
    expect((await indexRows(dataDir)).filter((row) => row.table === table)).toHaveLength(2);
    expect(await search(second, "ferry island", ["text"])).toEqual(["the ferry to the island leaves at dawn"]);
    expect(await search(second, "harbour boat", ["text"])).toEqual(["a boat crossing to the harbour in the morning"]);
    // Proposed by LanceDB's nearest word vectors, in the 32-bit column, old row and new.
    expect(await search(second, "ship sailing to the port", ["words"])).toEqual([
      "a boat crossing to the harbour in the morning",
      "the ferry to the island leaves at dawn",
    ]);
    await second.destroy();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    await dropDatabaseFor(dataDir);
  }
});
