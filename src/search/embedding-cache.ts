import type { Database } from "bun:sqlite";
import { createHash } from "node:crypto";

export const textHash = (text: string) => createHash("sha256").update(text).digest("base64url");

/** Vectors already computed for a space, so rebuilds and retries do not pay the model again. */
export function createEmbeddingCache(db: Database) {
  const get = db.query<{ vector: Uint8Array }, [string, string]>("SELECT vector FROM embedding_cache WHERE space_id = ? AND text_hash = ?");
  const put = db.query("INSERT OR REPLACE INTO embedding_cache (space_id, text_hash, vector) VALUES (?, ?, ?)");
  return {
    get(spaceId: string, hash: string): Float32Array | null {
      const row = get.get(spaceId, hash);
      if (!row) return null;
      const bytes = row.vector;
      // Copy: the blob's buffer may not be 4-byte aligned.
      return new Float32Array(bytes.slice().buffer, 0, bytes.byteLength / 4);
    },
    putMany(spaceId: string, entries: Array<[hash: string, vector: Float32Array]>): void {
      db.transaction(() => {
        for (const [hash, vector] of entries) put.run(spaceId, hash, new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength));
      })();
    },
    dropOtherSpaces(keepSpaceId: string): void {
      db.query("DELETE FROM embedding_cache WHERE space_id <> ?").run(keepSpaceId);
    },
  };
}
export type EmbeddingCache = ReturnType<typeof createEmbeddingCache>;
