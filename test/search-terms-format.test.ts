import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { all, run, sql } from "../src/db/store";
import { migrate } from "../src/db/migrate";
import { allMigrations } from "../src/migrations";
import { decodeField, decodeVector, encodeField, encodeVector } from "../src/search/analysis/item-terms";
import { dropDatabaseFor } from "./helpers/database";
import { mock, startTestServer, tempDir, type TestServer } from "./helpers/server";

const dir = tempDir("mnemo-terms-format-");
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropDatabaseFor(dir);
});

/** A field as rows written before spelled it: every count, `:1` too. */
const spelledBefore = (field: { length: number; counts: Map<string, number> }) =>
  [String(field.length), ...[...field.counts].map(([term, n]) => `${term}:${n}`)].join(" ");

test("a stored field leaves counts of 1 out and reads back whole, and by the query's terms, as rows written before spelled it", () => {
  const field = {
    length: 7,
    counts: new Map([
      ["garden", 1],
      ["gardening", 2],
      ["tea", 3],
      ["teapot", 1],
    ]),
  };
  expect(encodeField(field)).toBe("7 garden gardening:2 tea:3 teapot");
  for (const stored of [encodeField(field), spelledBefore(field)]) {
    expect(decodeField(stored)).toEqual(field);
    // A term that begins a longer one is found by itself, wherever it stands.
    expect(decodeField(stored, ["garden", "teapot", "tea", "gard", "pot"])).toEqual({
      length: 7,
      counts: new Map([
        ["garden", 1],
        ["teapot", 1],
        ["tea", 3],
      ]),
    });
    expect(decodeField(stored, ["gardening"])!.counts).toEqual(new Map([["gardening", 2]]));
  }
  const vector = Int8Array.from({ length: 100 }, (_, i) => ((i * 37) % 255) - 127);
  expect(encodeVector(vector)).toHaveLength(100);
  expect(decodeVector(encodeVector(vector))).toEqual(vector);
  expect(decodeVector(Buffer.from(vector.buffer).toString("base64"))).toEqual(vector);
  expect(decodeVector(encodeVector(null))).toBeNull();
  expect(decodeVector("")).toBeNull();
});

const WORDS = ["garden", "gardening", "tomato", "river", "boat", "boats", "tea", "teapot", "winter", "coat"];
const corpus = Array.from({ length: 40 }, (_, i) => {
  const picked = [0, 1, 2, 3].map((k) => WORDS[(i * 7 + k * ((i % 5) + 1)) % WORDS.length]);
  return `${i % 3 ? "I said" : "note:"} ${picked.join(" and the ")} (${i})`;
});
const QUERIES = ["garden tomato", "gardening", "tea", "teapot river", "the boats on the river", "vegetables"];

async function rankings(s: TestServer): Promise<Record<string, Array<[string, number]>>> {
  const out: Record<string, Array<[string, number]>> = {};
  for (const query of QUERIES) {
    const [status, body] = await s.call("POST", "/v1/memories/search", {
      token: mock("format"),
      body: { query, limit: 8 },
    });
    expect(status).toBe(200);
    out[query] = body.results.map((r: { content: string; score: number }) => [r.content, r.score]);
  }
  return out;
}

test("forward rows written before (word vectors as base64 text, counts of 1 spelled) rank exactly as rows written now", async () => {
  const first = await startTestServer({ dataDir: dir });
  for (const content of corpus) {
    const [status] = await first.call("POST", "/v1/memories", { token: mock("format"), body: { content } });
    expect(status).toBe(201);
  }
  await first.services.indexer.drain();
  const now = await rankings(first);
  expect(now.tea.length).toBeGreaterThan(2);
  expect(now.vegetables.length).toBeGreaterThan(0);
  const db = first.services.store.db;
  const rows = await all<{ source_id: string; item_id: string; terms: string; wvec: Uint8Array }>(
    db,
    sql`SELECT source_id, item_id, terms, wvec FROM search_terms WHERE owner_id = ${"format"}`,
  );
  expect(rows).toHaveLength(corpus.length);
  expect(rows.every((row) => row.wvec.length === 100 && !row.terms.includes(":1 "))).toBe(true);

  // As an earlier version stored them (on PostgreSQL, the column was text then).
  if (first.services.store.dialect === "postgres") {
    await run(db, sql`ALTER TABLE search_terms ALTER COLUMN wvec TYPE TEXT USING encode(wvec, 'base64')`);
    await run(db, sql`DELETE FROM schema_migrations WHERE id = ${"0600_search_terms_vector_bytes"}`);
  }
  for (const row of rows)
    await run(
      db,
      sql`UPDATE search_terms SET terms = ${spelledBefore(decodeField(row.terms)!)}, wvec = ${Buffer.from(row.wvec).toString("base64")}
          WHERE owner_id = ${"format"} AND source_id = ${row.source_id} AND item_id = ${row.item_id}`,
    );
  if (first.services.store.dialect === "postgres")
    expect(await migrate(first.services.store, allMigrations)).toEqual(["0600_search_terms_vector_bytes"]);
  await first.stop();

  // A new server: nothing kept in memory from the rows as they were.
  const second = await startTestServer({ dataDir: dir });
  try {
    const stored = await all<{ terms: string }>(
      second.services.store.db,
      sql`SELECT terms FROM search_terms WHERE owner_id = ${"format"}`,
    );
    expect(stored.every((row) => / \w+:1\b/.test(row.terms))).toBe(true);
    expect(await rankings(second)).toEqual(now);
    // Written again: stored the new way, and still ranked the same.
    const [, listed] = await second.call("GET", "/v1/memories?limit=100", { token: mock("format") });
    const one = listed.data.find((m: { content: string }) => m.content === corpus[5]);
    await second.call("PATCH", `/v1/memories/${one.id}`, { token: mock("format"), body: { content: `${corpus[5]}!` } });
    await second.call("PATCH", `/v1/memories/${one.id}`, { token: mock("format"), body: { content: corpus[5] } });
    await second.services.indexer.drain();
    expect(await rankings(second)).toEqual(now);
  } finally {
    await second.stop();
  }
});
