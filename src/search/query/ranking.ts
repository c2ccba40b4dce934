import type { HitSignals, SearchKind } from "../types";

/** A fused hit before its text, workspace and time are read from the store of record; `score` is unrounded. */
export interface RankedHit {
  kind: SearchKind;
  sourceId: string;
  itemId: string;
  score: number;
  /** Each signal's own score for this hit (the signals taking part in the query). */
  signals: HitSignals;
  key: string;
}

/**
 * A conversation turn (a memory or a chat message) whose text ends by asking ("Wow, that's
 * awesome! What's your best camping memory?") asks for what a query looks for rather than
 * holding it: on the page read back it ranks this much lower (its score times the factor).
 * Chosen on the development set (bench/recall.ts; docs/retrieval.md): there a question turn is
 * the evidence half as often as turns are on the whole (13% of its evidence turns, 25% of its turns).
 */
export const QUESTION_TURN_FACTOR = 0.9;
const TURN_KINDS: ReadonlySet<SearchKind> = new Set(["memory", "message"]);
const ASKS = /[?\uff1f]\s*$/u;

/**
 * The hits read back with each question turn's score lowered (QUESTION_TURN_FACTOR), and
 * those then below `minScore` left out. It needs the text, so it applies to the page read
 * back (the first `limit` and ties), no further: no store read is added. A function of the
 * items' current text, so the same whether they are pending, indexed or compacted.
 */
export function lowerQuestionTurns<T extends { kind: SearchKind; score: number; text: string }>(
  hits: T[],
  minScore = 0,
): T[] {
  return hits
    .map((hit) =>
      TURN_KINDS.has(hit.kind) && ASKS.test(hit.text) ? { ...hit, score: hit.score * QUESTION_TURN_FACTOR } : hit,
    )
    .filter((hit) => hit.score > 0 && hit.score >= minScore);
}

const byKeyOrder = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * The hits of a score-sorted list that can end up among its first `count` once ties are
 * broken by recency: the first `count`, and every later one tied with the last of them.
 */
export function contenders<T extends { score: number }>(sorted: T[], count: number): T[] {
  if (sorted.length <= count) return sorted;
  let end = count;
  while (end < sorted.length && sorted[end].score === sorted[count - 1].score) end++;
  return sorted.slice(0, end);
}

/** The final order: best score first, ties to the newer item, then by key (a stable order); scores rounded. */
export function order<T extends RankedHit & { createdAtMs: number }>(
  hits: T[],
  limit: number,
): Array<Omit<T, "key" | "createdAtMs">> {
  return [...hits]
    .sort((a, b) => b.score - a.score || b.createdAtMs - a.createdAtMs || byKeyOrder(a, b))
    .slice(0, limit)
    .map(({ key: _, createdAtMs: __, ...hit }) => ({
      ...hit,
      score: rounded(hit.score),
      signals: roundedSignals(hit.signals),
    }));
}

const rounded = (score: number) => Math.round(score * 1e6) / 1e6;
function roundedSignals(signals: HitSignals): HitSignals {
  const out: HitSignals = {};
  for (const [name, value] of Object.entries(signals) as Array<[keyof HitSignals, number]>) out[name] = rounded(value);
  return out;
}
