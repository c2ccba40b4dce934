import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { all, run, sql, type Store } from "../src/db/store";
import { migrate } from "../src/db/migrate";
import { allMigrations } from "../src/migrations";
import { dropDatabaseFor } from "./helpers/database";
import { startFakeEmbedder } from "./helpers/fake-embedder";
import { startTestServer, tempDir } from "./helpers/server";

const dir = tempDir("mnemo-embedding-cache-");
const fake = startFakeEmbedder(384);
const texts = Array.from({ length: 40 }, (_, i) => `a note about the garden shed, number ${i}`);
afterAll(async () => {
  fake.stop();
  rmSync(dir, { recursive: true, force: true });
  await dropDatabaseFor(dir);
});

const entries = (store: Store) =>
  all<{ space_id: string; text_hash: string; vector: Uint8Array; used_at: number }>(
    store.db,
    sql`SELECT space_id, text_hash, vector, used_at FROM embedding_cache ORDER BY space_id, text_hash`,
  ).then((rows) =>
    rows.map((r) => ({ ...r, vector: Buffer.from(r.vector).toString("hex"), used_at: Number(r.used_at) })),
  );

/** Bytes the cache's table takes on disk per row (SQLite). */
async function bytesPerRow(store: Store): Promise<number> {
  const [{ bytes }] = await all<{ bytes: number }>(
    store.db,
    sql`SELECT SUM(pgsize) AS bytes FROM dbstat WHERE name = 'embedding_cache'`,
  );
  const [{ n }] = await all<{ n: number }>(store.db, sql`SELECT COUNT(*) AS n FROM embedding_cache`);
  return bytes / n;
}

test("the embedding cache keeps each vector inside its table's pages; a cache laid out before is copied over whole, and a rebuild then pays the model nothing", async () => {
  const env = { EMBEDDINGS_PROVIDER: "openai", EMBEDDINGS_URL: fake.url, EMBEDDINGS_MODEL: "fake-384" };
  const server = await startTestServer({ dataDir: dir, env });
  try {
    for (const content of texts)
      expect((await server.call("POST", "/v1/memories", { body: { content } }))[0]).toBe(201);
    await server.services.indexer.drain();
    const store = server.services.store;
    const cached = await entries(store);
    expect(cached).toHaveLength(40);
    expect(cached.every((entry) => entry.vector.length === 384 * 4 * 2)).toBe(true);
    if (store.dialect === "sqlite") {
      // 1,536 bytes of vector, its keys, and the page's share: not an overflow page each.
      expect(await bytesPerRow(store)).toBeLessThan(2_500);
      // As a store written before: the same rows in a WITHOUT ROWID table.
      await run(
        store.db,
        sql`CREATE TABLE embedding_cache_old (space_id TEXT NOT NULL, text_hash TEXT NOT NULL, vector BLOB NOT NULL, used_at INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (space_id, text_hash)) WITHOUT ROWID`,
      );
      await run(
        store.db,
        sql`INSERT INTO embedding_cache_old SELECT space_id, text_hash, vector, used_at FROM embedding_cache`,
      );
      await run(store.db, sql`DROP TABLE embedding_cache`);
      await run(store.db, sql`ALTER TABLE embedding_cache_old RENAME TO embedding_cache`);
      await run(store.db, sql`CREATE INDEX embedding_cache_by_use ON embedding_cache (used_at)`);
      expect(await bytesPerRow(store)).toBeGreaterThan(4_000);
      await run(store.db, sql`DELETE FROM schema_migrations WHERE id = ${"0610_embedding_cache_in_pages"}`);
      expect(await migrate(store, allMigrations)).toEqual(["0610_embedding_cache_in_pages"]);
      expect(await bytesPerRow(store)).toBeLessThan(2_500);
    }
    expect(await entries(store)).toEqual(cached);
    // An index of an older layout is rebuilt at the next start: every vector from the cache.
    await run(store.db, sql`UPDATE settings SET value = '6' WHERE key = 'index_schema'`);
  } finally {
    await server.stop();
  }
  const asked = fake.requests.length;
  const again = await startTestServer({ dataDir: dir, env });
  try {
    await again.services.indexer.drain();
    const [, found] = await again.call("POST", "/v1/memories/search", {
      body: { query: "garden shed", signals: ["vector"], limit: 50 },
    });
    expect(found.results).toHaveLength(40);
    expect(
      fake.requests
        .slice(asked)
        .flat()
        .filter((text) => text.startsWith("a note about")),
    ).toEqual([]);
  } finally {
    await again.stop();
  }
});
