/**
 * The baseline row of the recall bench: LanceDB's own full-text search on the same texts,
 * with nothing of Mnemo's: one table per conversation holding each turn's memory text
 * ("<speaker>: <text>"), LanceDB's default FTS index (`Index.fts()`), and the question sent
 * as a plain full-text query, limit 10. What a caller would get from LanceDB alone.
 */
import * as lancedb from "@lancedb/lancedb";
import type { Conversation } from "./locomo";
import { tempDir, removeDir } from "./harness";

/** Per question: its category and the fraction of its evidence in the top 1, 5 and 10. */
export type QuestionHits = Array<{ category: number; hits: number[] }>;

export async function lanceFtsBaseline(conversations: Conversation[], ks: readonly number[]): Promise<QuestionHits> {
  const dir = tempDir("mnemo-lance-fts-");
  const out: QuestionHits = [];
  try {
    const db = await lancedb.connect(dir);
    for (const [i, conversation] of conversations.entries()) {
      const table = await db.createTable(
        `c${i}`,
        conversation.turns.map((turn) => ({ dia_id: turn.diaId, text: turn.content })),
      );
      await table.createIndex("text", { config: lancedb.Index.fts() });
      for (const q of conversation.questions) {
        // A question LanceDB's query parser refuses counts as finding nothing.
        const rows = (await table
          .query()
          .fullTextSearch(q.question)
          .limit(10)
          .toArray()
          .catch(() => [])) as Array<{ dia_id: string }>;
        const ranked = rows.map((row) => row.dia_id);
        const evidence = new Set(q.evidence);
        out.push({
          category: q.category,
          hits: ks.map((k) => ranked.slice(0, k).filter((id) => evidence.has(id)).length / evidence.size),
        });
      }
    }
  } finally {
    removeDir(dir);
  }
  return out;
}
