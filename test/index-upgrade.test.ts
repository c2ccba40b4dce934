import { afterAll, expect, test } from "bun:test";
import * as lancedb from "@lancedb/lancedb";
import { Field, FixedSizeList, Float32, Precision, Schema } from "apache-arrow";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { run, sql } from "../src/db/store";
import { rowsTable } from "../src/search/lance/arrow-write";
import { fullTextIndex, itemsSchema, vectorSchema } from "../src/search/lance/lance-schema";
import { runCli } from "./helpers/cli";
import { dropDatabaseFor } from "./helpers/database";
import { startFakeEmbedder } from "./helpers/fake-embedder";
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

/** The element type of a vector column of an index table ("Float16" or "Float32"). */
async function vectorType(dataDir: string, table: string, column: string): Promise<string> {
  const db = await lancedb.connect(join(dataDir, "index"));
  try {
    const handle = await db.openTable(table);
    const type = (await handle.schema()).fields.find((field) => field.name === column)!.type as FixedSizeList;
    handle.close();
    return type.valueType.precision === Precision.HALF ? "Float16" : "Float32";
  } finally {
    db.close();
  }
}

/** Makes a table again as an earlier Mnemo wrote it: the same rows and full-text indices, the vector column as 32-bit floats. */
async function asThirtyTwoBit(dataDir: string, table: string, column: string): Promise<void> {
  const db = await lancedb.connect(join(dataDir, "index"));
  try {
    const handle = await db.openTable(table);
    const rows = (await handle.query().toArray()).map((row) => ({
      ...row,
      meta: [...row.meta],
      [column]: Float32Array.from(row[column]),
    }));
    const fullText = (await handle.listIndices()).flatMap((index) => index.columns).filter((c) => c.startsWith("text"));
    const current = (await handle.schema()).fields.find((field) => field.name === column)!.type as FixedSizeList;
    const ours = column === "wvec" ? itemsSchema() : vectorSchema(current.listSize);
    const schema = new Schema(
      ours.fields.map((field) =>
        field.name === column
          ? new Field(column, new FixedSizeList(current.listSize, new Field("item", new Float32(), true)), false)
          : field,
      ),
    );
    handle.close();
    const old = await db.createTable(table, await rowsTable(schema, rows), { mode: "overwrite" });
    for (const text of fullText) await old.createIndex(text, { config: fullTextIndex() });
    old.close();
  } finally {
    db.close();
  }
}

test("vectors are half floats in new tables; tables an earlier version made with 32-bit ones take new rows as they are and stay searchable", async () => {
  const dataDir = tempDir("mnemo-upgrade-vectors-");
  const fake = startFakeEmbedder(64);
  const env = { EMBEDDINGS_PROVIDER: "openai", EMBEDDINGS_URL: fake.url, EMBEDDINGS_MODEL: "fake-64" };
  const search = async (server: TestServer, query: string, signals: string[]) => {
    const [status, body] = await server.call("POST", "/v1/memories/search", { body: { query, signals, limit: 10 } });
    expect(status).toBe(200);
    return (body.results as Array<{ content: string }>).map((r) => r.content).sort();
  };
  const both = ["a boat crossing to the harbour in the morning", "the ferry to the island leaves at dawn"];
  try {
    const first = await startTestServer({ dataDir, env });
    await first.call("POST", "/v1/memories", { body: { content: both[1] } });
    await first.services.indexer.drain();
    const tables = await indexTables(dataDir);
    const text = tables.find((name) => !name.includes("__v_"))!;
    const vectors = tables.find((name) => name.includes("__v_"))!;
    expect(await vectorType(dataDir, text, "wvec")).toBe("Float16");
    expect(await vectorType(dataDir, vectors, "vector")).toBe("Float16");
    await first.stop();

    await asThirtyTwoBit(dataDir, text, "wvec");
    await asThirtyTwoBit(dataDir, vectors, "vector");
    const second = await startTestServer({ dataDir, env });
    await second.call("POST", "/v1/memories", { body: { content: both[0] } });
    await second.services.indexer.drain();
    expect(await vectorType(dataDir, text, "wvec")).toBe("Float32");
    expect(await vectorType(dataDir, vectors, "vector")).toBe("Float32");
    expect((await indexRows(dataDir)).filter((row) => row.table === text)).toHaveLength(2);
    expect((await indexRows(dataDir, { vectors: true })).filter((row) => row.table === vectors)).toHaveLength(2);
    expect(await search(second, "ferry island", ["text"])).toEqual([both[1]]);
    expect(await search(second, "harbour boat", ["text"])).toEqual([both[0]]);
    // Proposed by LanceDB's nearest vectors, in the 32-bit columns, old row and new.
    expect(await search(second, "ship sailing to the port", ["words"])).toEqual(both);
    expect(await search(second, "ship sailing to the port", ["vector"])).toEqual(both);
    await second.destroy();
  } finally {
    fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await dropDatabaseFor(dataDir);
  }
});
