import { afterAll, expect, test } from "bun:test";
import * as lancedb from "@lancedb/lancedb";
import { rmSync } from "node:fs";
import { rowsTable } from "../src/search/lance/arrow-write";
import { itemsSchema, vectorSchema, WORD_VECTOR_DIMS, type IndexRow } from "../src/search/lance/lance-schema";
import { tempDir } from "./helpers/server";

const dir = tempDir("mnemo-arrow-write-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const row = (i: number): IndexRow => ({
  source_key: `memory|m${i}`,
  owner_id: "u",
  kind: "memory",
  source_id: `m${i}`,
  item_id: `m${i}`,
  workspace_id: i % 3 === 0 ? null : `ws${i % 3}`,
  session_id: i % 2 ? `s${i}` : null,
  document_type: null,
  meta: i % 4 ? [`k=v${i}`, "tag=ü ✓"] : [],
  created_at: 1_700_000_000_000 + i,
  text: `note ${i} — café naïve 日本`,
  context_before: i % 5 ? "" : `before ${i}`,
  context_after: "",
  wvec: Float32Array.from({ length: WORD_VECTOR_DIMS }, (_, d) => ((i + d) % 7) / 8),
});

test("index rows reach LanceDB as written, in order, across slices: strings (nulls, multi-byte), lists, numbers and vectors", async () => {
  const db = await lancedb.connect(dir);
  const rows = Array.from({ length: 700 }, (_, i) => row(i));
  const table = await db.createEmptyTable("items", itemsSchema());
  await table.add(await rowsTable(itemsSchema(), rows));
  const read = (await table.query().withRowId().toArray()) as Array<Record<string, any>>;
  expect(read).toHaveLength(700);
  read.sort((a, b) => Number(a._rowid) - Number(b._rowid));
  read.forEach((got, i) => {
    const want = rows[i];
    for (const key of [
      "source_key",
      "workspace_id",
      "session_id",
      "document_type",
      "created_at",
      "text",
      "context_before",
    ] as const)
      expect(got[key]).toEqual(want[key]);
    expect([...got.meta]).toEqual(want.meta);
    expect([...got.wvec]).toEqual([...want.wvec!]);
  });

  const vectors = await db.createEmptyTable("vectors", vectorSchema(8));
  const withVectors = rows
    .slice(0, 300)
    .map((r, i) => ({ ...r, vector: Float32Array.from({ length: 8 }, (_, d) => i + d) }));
  await vectors.add(await rowsTable(vectorSchema(8), withVectors));
  const nearest = (await vectors.vectorSearch(withVectors[123].vector).limit(1).toArray()) as Array<
    Record<string, any>
  >;
  expect(nearest[0].item_id).toBe("m123");
});

test("a row whose vector has the wrong length is refused, naming the column", async () => {
  const bad = { ...row(1), wvec: new Float32Array(3) };
  await expect(rowsTable(itemsSchema(), [bad])).rejects.toThrow(/'wvec'/);
});
