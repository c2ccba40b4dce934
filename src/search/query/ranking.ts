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
export function order<T extends RankedHit & { createdAtMs: number }>(hits: T[], limit: number): Array<Omit<T, "key" | "createdAtMs">> {
  return [...hits]
    .sort((a, b) => b.score - a.score || b.createdAtMs - a.createdAtMs || byKeyOrder(a, b))
    .slice(0, limit)
    .map(({ key: _, createdAtMs: __, ...hit }) => ({ ...hit, score: rounded(hit.score), signals: roundedSignals(hit.signals) }));
}

const rounded = (score: number) => Math.round(score * 1e6) / 1e6;
function roundedSignals(signals: HitSignals): HitSignals {
  const out: HitSignals = {};
  for (const [name, value] of Object.entries(signals) as Array<[keyof HitSignals, number]>) out[name] = rounded(value);
  return out;
}

export function diversify<T extends RankedHit & { createdAtMs: number; sessionId: string | null }>(poolIn: T[], matched: Map<string, string[]>, idf: Map<string, number>, rescore: (key: string, contextless: ReadonlySet<string>, keep: number) => number, entities: string[] = []): T[] {
  const ENT = Number(process.env.MH_ENT ?? 0);
  const MINENT = Number(process.env.MH_MINENT ?? 2);
  const MODE = process.env.MH_CTX_MODE ?? "";
  const KEEP = Number(process.env.MH_CTX_KEEP ?? 0);
  let pool = poolIn;
  const QPEN = Number(process.env.MH_QPEN ?? 0);
  if (QPEN > 0) pool = pool.map((h) => (/\?\s*$/.test((process.env.MH_NOSTRIP ? (h as unknown as { text: string }).text : (h as unknown as { text: string }).text.replace(/\s*\[shares[^\]]*\]\s*$/, ""))) ? { ...h, score: h.score * (1 - QPEN) } : h));
  if (MODE === "sym") {
    const own = new Map<string, Array<{ key: string; terms: string[] }>>();
    for (const h of pool) if (h.sessionId) (own.get(h.sessionId) ?? own.set(h.sessionId, []).get(h.sessionId)!).push({ key: h.key, terms: matched.get(h.key) ?? [] });
    pool = pool.map((h) => {
      if (!h.sessionId) return h;
      const others = new Set<string>();
      for (const o of own.get(h.sessionId)!) if (o.key !== h.key) for (const t of o.terms) others.add(t);
      for (const t of matched.get(h.key) ?? []) others.delete(t);
      if (!others.size) return h;
      return { ...h, score: Math.min(h.score, rescore(h.key, others, KEEP)) };
    });
  }
  const SESSION = Number(process.env.MH_SESSION ?? 1);
  const COVER = Number(process.env.MH_COVER ?? 0);
  const left = [...pool];
  const out: T[] = [];
  const sessions = new Map<string, number>();
  const covered = new Set<string>();
  while (left.length) {
    let best = -1;
    let bestScore = -Infinity;
    for (let i = 0; i < left.length; i++) {
      const h = left[i]!;
      let s = h.score;
      const n = h.sessionId ? sessions.get(h.sessionId) ?? 0 : 0;
      if (out.length >= Number(process.env.MH_SESS_FROM ?? 0)) s *= Math.pow(SESSION, n);
      if (MODE === "greedy" && h.sessionId && n > 0) {
        const others = new Set<string>();
        for (const o of out) if (o.sessionId === h.sessionId) for (const t of matched.get(o.key) ?? []) others.add(t);
        for (const t of matched.get(h.key) ?? []) others.delete(t);
        if (others.size) s = Math.min(s, rescore(h.key, others, KEEP) * Math.pow(SESSION, n));
      }
      if (COVER > 0 && out.length) {
        const terms = matched.get(h.key) ?? [];
        let all = 0, fresh = 0;
        for (const t of terms) { const w = idf.get(t) ?? 0; all += w; if (!covered.has(t)) fresh += w; }
        s *= 1 - COVER + COVER * (all > 0 ? fresh / all : 0);
      }
      if (ENT > 0 && entities.length >= MINENT) {
        const terms = matched.get(h.key) ?? [];
        if (!entities.some((e) => !covered.has(e) && terms.includes(e))) s /= 1 + ENT;
      }
      const b = best >= 0 ? left[best]! : null;
      if (s > bestScore || (s === bestScore && b && (h.createdAtMs > b.createdAtMs || (h.createdAtMs === b.createdAtMs && h.key < b.key)))) { best = i; bestScore = s; }
    }
    const h = left.splice(best, 1)[0]!;
    if (h.sessionId) sessions.set(h.sessionId, (sessions.get(h.sessionId) ?? 0) + 1);
    for (const t of matched.get(h.key) ?? []) covered.add(t);
    out.push({ ...h, score: bestScore });
  }
  return out;
}
