import { createHash } from "node:crypto";
import { all, chunks, first, list, run, sql, type Executor, type Store } from "../../db/store";

/**
 * The cache key of a text: per owner, so that one user's stored vectors never make
 * another user's write of the same text cheaper (which would tell them it exists).
 */
export const vectorKey = (ownerId: string, text: string) =>
  createHash("sha256").update(`${ownerId.length}:${ownerId}|${text}`).digest("base64url");

/** Rows kept by default: about 1.5 GB of 384-d vectors, more than any one server's live texts so far. */
export const DEFAULT_EMBEDDING_CACHE_MAX = 1_000_000;
/** Past the bound, the least recently used are removed down to this share of it, so eviction runs rarely. */
const EVICT_TO = 0.9;

/** A blob as floats. Copied: the blob may be a view into a larger (pooled) buffer, at any alignment. */
function toVector(bytes: Uint8Array): Float32Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}

/** The cache keys each source's index items use now (`sourceKey` → keys). */
export type SourceKeys = Map<string, string[]>;
type Pair = [source: string, key: string];

/**
 * Vectors already computed, so rebuilds, retries and switching back to an earlier model
 * do not pay the model again. Entries are tied to the sources that use them (an entry
 * whose last source is deleted or changed goes) and bounded in number (least recently
 * used first). Only the index writer (one process at a time) writes here.
 */
export function createEmbeddingCache(
  store: Store,
  {
    maxRows = DEFAULT_EMBEDDING_CACHE_MAX,
    now = Date.now,
  }: { maxRows?: number /** ms clock for `used_at` */; now?: () => number } = {},
) {
  // Rows in the table as this process counts them; counted for real before evicting.
  let approxRows: number | null = null;

  /** The keys each of these sources used as last recorded. */
  async function recordedRefs(tx: Executor, sourceKeys: string[]): Promise<Map<string, Set<string>>> {
    const before = new Map<string, Set<string>>();
    for (const chunk of chunks(sourceKeys)) {
      const rows = await all<{ source_key: string; text_hash: string }>(
        tx,
        sql`SELECT source_key, text_hash FROM embedding_refs WHERE source_key IN ${list(chunk)}`,
      );
      for (const r of rows) before.set(r.source_key, (before.get(r.source_key) ?? new Set()).add(r.text_hash));
    }
    return before;
  }

  /** References to drop (no longer used) and to add (newly used). */
  function diffRefs(before: Map<string, Set<string>>, sources: SourceKeys) {
    const stale: Pair[] = [];
    const fresh: Pair[] = [];
    for (const [source, keys] of sources) {
      const now = new Set(keys);
      const had = before.get(source) ?? new Set<string>();
      for (const key of had) if (!now.has(key)) stale.push([source, key]);
      for (const key of now) if (!had.has(key)) fresh.push([source, key]);
    }
    return { stale, fresh };
  }

  /** Applies a diff inside `tx`; entries that lost their last reference are removed. Returns how many. */
  async function applyRefs(tx: Executor, stale: Pair[], fresh: Pair[]): Promise<number> {
    const pairs = (chunk: Pair[]) => sql.join(chunk.map(([source, key]) => sql`(${source}, ${key})`));
    for (const chunk of chunks(stale, 200))
      await run(tx, sql`DELETE FROM embedding_refs WHERE (source_key, text_hash) IN (${pairs(chunk)})`);
    for (const chunk of chunks(fresh, 200))
      await run(
        tx,
        sql`INSERT INTO embedding_refs (source_key, text_hash) VALUES ${pairs(chunk)} ON CONFLICT DO NOTHING`,
      );
    let removed = 0;
    for (const keys of chunks([...new Set(stale.map(([, key]) => key))])) {
      removed += await run(
        tx,
        sql`DELETE FROM embedding_cache WHERE text_hash IN ${list(keys)}
                                   AND NOT EXISTS (SELECT 1 FROM embedding_refs r WHERE r.text_hash = embedding_cache.text_hash)`,
      );
    }
    return removed;
  }

  async function insertVectors(
    tx: Executor,
    spaceId: string,
    entries: Array<[key: string, vector: Float32Array]>,
  ): Promise<void> {
    const usedAt = now();
    for (const [key, vector] of entries) {
      const bytes = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
      await run(
        tx,
        sql`INSERT INTO embedding_cache (space_id, text_hash, vector, used_at) VALUES (${spaceId}, ${key}, ${bytes}, ${usedAt})
                        ON CONFLICT (space_id, text_hash) DO UPDATE SET vector = excluded.vector, used_at = excluded.used_at`,
      );
    }
  }

  /** Removes the least recently used rows once the table is past `maxRows`. */
  async function evictOverflow(): Promise<void> {
    if (approxRows !== null && approxRows <= maxRows) return;
    approxRows = Number((await first<{ n: number }>(store.db, sql`SELECT COUNT(*) AS n FROM embedding_cache`))?.n ?? 0);
    const excess = approxRows - Math.floor(maxRows * EVICT_TO);
    if (approxRows <= maxRows || excess <= 0) return;
    approxRows -= await run(
      store.db,
      sql`DELETE FROM embedding_cache WHERE (space_id, text_hash) IN
            (SELECT space_id, text_hash FROM embedding_cache ORDER BY used_at, text_hash LIMIT ${excess})`,
    );
  }

  return {
    /** Cached vectors of `keys` in a space; the ones found count as used now. */
    async getMany(spaceId: string, keys: string[]): Promise<Map<string, Float32Array>> {
      const found = new Map<string, Float32Array>();
      for (const chunk of chunks(keys)) {
        const rows = await all<{ text_hash: string; vector: Uint8Array }>(
          store.db,
          sql`SELECT text_hash, vector FROM embedding_cache WHERE space_id = ${spaceId} AND text_hash IN ${list(chunk)}`,
        );
        for (const r of rows) found.set(r.text_hash, toVector(r.vector));
        if (rows.length) {
          await run(
            store.db,
            sql`UPDATE embedding_cache SET used_at = ${now()} WHERE space_id = ${spaceId} AND text_hash IN ${list(rows.map((r) => r.text_hash))}`,
          );
        }
      }
      return found;
    },

    /**
     * After a vector batch (or the part of it embedded before an outage), in one
     * transaction: the new vectors, and which keys each source of the batch uses now (a
     * deleted source uses none). Entries that lost their last source are removed.
     */
    async record(
      spaceId: string,
      entries: Array<[key: string, vector: Float32Array]>,
      sources: SourceKeys,
    ): Promise<void> {
      const removed = await store.transaction(async (tx) => {
        await insertVectors(tx, spaceId, entries);
        const { stale, fresh } = diffRefs(await recordedRefs(tx, [...sources.keys()]), sources);
        return applyRefs(tx, stale, fresh);
      });
      if (approxRows !== null) approxRows += entries.length - removed;
      await evictOverflow();
    },

    /**
     * Without an embedder nothing new is cached (nor referenced), but changed and deleted
     * sources still release the entries they used. One read when they used none
     * (`current` is only computed otherwise).
     */
    async release(sourceKeys: string[], current: () => SourceKeys): Promise<void> {
      const before = await recordedRefs(store.db, sourceKeys);
      if (!before.size) return;
      const { stale } = diffRefs(before, current());
      if (!stale.length) return;
      const removed = await store.transaction((tx) => applyRefs(tx, stale, []));
      if (approxRows !== null) approxRows -= removed;
    },

    async dropOtherSpaces(keepSpaceId: string): Promise<void> {
      const removed = await run(store.db, sql`DELETE FROM embedding_cache WHERE space_id <> ${keepSpaceId}`);
      if (approxRows !== null) approxRows -= removed;
    },
  };
}
export type EmbeddingCache = ReturnType<typeof createEmbeddingCache>;
