import { analyze } from "./analyzer";

/**
 * How much a term in the text around an item counts beside one in its own text (the same
 * weights as the index's multi-column match: lance-schema.ts TEXT_BOOSTS).
 */
export const FIELD_WEIGHTS = { text: 1, before: 0.8, after: 0.3 } as const;

/** One field of an item as scoring sees it: its length in terms and each term's count. */
export interface FieldTerms {
  length: number;
  counts: Map<string, number>;
}

/** What exact scoring needs of one item: its own text, and the text before and after it (conversation context). */
export interface ItemTerms {
  text: FieldTerms;
  before: FieldTerms | null;
  after: FieldTerms | null;
}

function field(text: string): FieldTerms {
  const terms = analyze(text);
  const counts = new Map<string, number>();
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
  return { length: terms.length, counts };
}

/** The analysis of one item, the same whether it is done by the index writer or by a search. */
export function itemTerms(item: { text: string; contextBefore?: string; contextAfter?: string }): ItemTerms {
  return { text: field(item.text), before: item.contextBefore ? field(item.contextBefore) : null, after: item.contextAfter ? field(item.contextAfter) : null };
}

/** `length term:count term:count`: terms hold neither spaces nor colons (they are runs of letters and digits). */
export function encodeField(field: FieldTerms | null): string {
  if (!field) return "";
  return [String(field.length), ...[...field.counts].map(([term, n]) => `${term}:${n}`)].join(" ");
}

export function decodeField(text: string): FieldTerms | null {
  if (!text) return null;
  const [length, ...pairs] = text.split(" ");
  const counts = new Map<string, number>();
  for (const pair of pairs) {
    const at = pair.lastIndexOf(":");
    counts.set(pair.slice(0, at), Number(pair.slice(at + 1)));
  }
  return { length: Number(length), counts };
}

/** The two context fields in one stored column: `before|after`. */
export const encodeContext = (terms: ItemTerms) => (terms.before || terms.after ? `${encodeField(terms.before)}|${encodeField(terms.after)}` : "");
export function decodeContext(text: string): Pick<ItemTerms, "before" | "after"> {
  if (!text) return { before: null, after: null };
  const [before, after] = text.split("|");
  return { before: decodeField(before), after: decodeField(after ?? "") };
}
