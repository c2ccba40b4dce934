import { createHash } from "node:crypto";
import { first, run, sql, type Store } from "../db/store";

export const textHash = (text: string) => createHash("sha256").update(text).digest("base64url");

/** Vectors already computed for a space, so rebuilds and retries do not pay the model again. */
export function createEmbeddingCache(store: Store) {
  return {
    async get(spaceId: string, hash: string): Promise<Float32Array | null> {
      const row = await first<{ vector: Uint8Array }>(store.db, sql`SELECT vector FROM embedding_cache WHERE space_id = ${spaceId} AND text_hash = ${hash}`);
      if (!row) return null;
      const bytes = row.vector;
      // Copy: the blob's buffer may not be 4-byte aligned.
      return new Float32Array(bytes.slice().buffer, 0, bytes.byteLength / 4);
    },
    async putMany(spaceId: string, entries: Array<[hash: string, vector: Float32Array]>): Promise<void> {
      await store.transaction(async (tx) => {
        for (const [hash, vector] of entries) {
          const bytes = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
          await run(tx, sql`INSERT INTO embedding_cache (space_id, text_hash, vector) VALUES (${spaceId}, ${hash}, ${bytes})
                            ON CONFLICT (space_id, text_hash) DO UPDATE SET vector = excluded.vector`);
        }
      });
    },
    async dropOtherSpaces(keepSpaceId: string): Promise<void> {
      await run(store.db, sql`DELETE FROM embedding_cache WHERE space_id <> ${keepSpaceId}`);
    },
  };
}
export type EmbeddingCache = ReturnType<typeof createEmbeddingCache>;
