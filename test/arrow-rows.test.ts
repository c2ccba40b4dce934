import { afterAll, expect, test } from "bun:test";
import * as lancedb from "@lancedb/lancedb";
import { rmSync } from "node:fs";
import { numericColumns } from "../src/search/lance/arrow-rows";
import { fullTextIndex } from "../src/search/lance/lance-schema";
import { tempDir } from "./helpers/server";

const dir = tempDir("mnemo-arrow-rows-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const words = ["harbour", "lantern", "ferry", "tide", "gull", "anchor"];

async function table() {
  const db = await lancedb.connect(dir);
  // Two fragments, so results come from more than one file; a row count above one batch's worth of hits.
  const rows = (from: number) =>
    Array.from({ length: 300 }, (_, i) => ({
      id: `m${from + i}`,
      text: `${words[(from + i) % 6]} ${words[(from + i * 7) % 6]} note ${from + i}`,
    }));
  const created = await db.createTable("t", rows(0));
  await created.add(rows(300));
  await created.createIndex("text", { config: fullTextIndex() });
  return created;
}

test("full-text hits read lean: the same addresses, scores and row ids as the SDK's toArray, for many queries and limits, and none for a word no row has", async () => {
  const t = await table();
  const query = (q: string, limit: number) =>
    t.search(q, "fts").select(["_rowaddr", "_score"]).withRowId().limit(limit);
  for (const [q, limit] of [
    ["harbour", 40],
    ["lantern ferry", 10],
    ["gull anchor tide", 400],
    ["note", 1],
    ["zeppelin", 40],
  ] as const) {
    const expected = (await query(q, limit).toArray()) as Array<{ _rowaddr: bigint; _score: number; _rowid: bigint }>;
    const columns = await numericColumns(query(q, limit), ["_rowaddr", "_score", "_rowid"], limit);
    expect(columns).not.toBeNull();
    const [addresses, scores, rowIds] = columns!;
    expect(addresses.length).toBe(expected.length);
    // Ties may come in either order from one run to the next: compare as sets of (address, score).
    const pairs = (list: Array<[number, number, number]>) =>
      list.map(([a, s, r]) => `${a}:${s.toFixed(5)}:${r}`).sort();
    expect(pairs(Array.from(addresses, (a, i) => [a, scores[i], rowIds[i]]))).toEqual(
      pairs(expected.map((r) => [Number(r._rowaddr), r._score, Number(r._rowid)])),
    );
    // Best first.
    for (let i = 1; i < scores.length; i++) expect(scores[i]).toBeLessThanOrEqual(scores[i - 1]);
    if (q === "zeppelin") expect(addresses.length).toBe(0);
    else expect(addresses.length).toBeGreaterThan(0);
  }
});

test("a column it does not read (text), or one not in the result, gives null: the caller reads the SDK's way", async () => {
  const db = await lancedb.connect(dir);
  const t = await db.openTable("t");
  expect(await numericColumns(t.search("harbour", "fts").select(["id", "_score"]).limit(5), ["_score"], 5)).toBeNull();
  expect(await numericColumns(t.search("harbour", "fts").select(["_score"]).limit(5), ["_rowaddr"], 5)).toBeNull();
});
