import { analyze, QUERY_STOP_WORDS, words } from "./analyzer";
import { textVector, type WordVectors } from "./word-vectors";

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

/**
 * What exact scoring needs of one item: its own text, and the text before and after it
 * (conversation context); its word vector (int8, as stored: see `quantise`); its time.
 */
export interface ItemTerms {
  text: FieldTerms;
  before: FieldTerms | null;
  after: FieldTerms | null;
  vector: Int8Array | null;
  at: number;
}

function field(text: string): FieldTerms {
  const terms = analyze(text);
  const counts = new Map<string, number>();
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
  return { length: terms.length, counts };
}

/**
 * The analysis of one item, the same whether it is done by the index writer or by a
 * search (`vectors` null: the word-vector file could not be read; no vector then).
 */
export function itemTerms(
  item: { text: string; contextBefore?: string; contextAfter?: string; createdAtMs: number },
  vectors: WordVectors | null,
): ItemTerms {
  return {
    text: field(item.text),
    before: item.contextBefore ? field(item.contextBefore) : null,
    after: item.contextAfter ? field(item.contextAfter) : null,
    vector: vectors ? quantise(contentVector(vectors, item.text)) : null,
    at: item.createdAtMs,
  };
}

/** The word vector of a text's content words (the query stop list dropped), or null. */
export function contentVector(vectors: WordVectors, text: string): Float32Array | null {
  const list = words(text);
  const content = list.filter((word) => !QUERY_STOP_WORDS.has(word));
  return textVector(vectors, content.length ? content : list);
}

/** A unit vector as int8 (x 127): 100 bytes an item, and the same cosine read from a row or computed afresh. */
export function quantise(vector: Float32Array | null): Int8Array | null {
  if (!vector) return null;
  const out = new Int8Array(vector.length);
  for (let i = 0; i < vector.length; i++) out[i] = Math.max(-127, Math.min(127, Math.round(vector[i]! * 127)));
  return out;
}

/** Cosine of a query vector (unit length) and a stored int8 vector. */
export function cosineTo(query: Float32Array, stored: Int8Array): number {
  let dot = 0;
  let norm = 0;
  for (let i = 0; i < stored.length; i++) {
    dot += query[i]! * stored[i]!;
    norm += stored[i]! * stored[i]!;
  }
  return norm > 0 ? dot / Math.sqrt(norm) : 0;
}

/**
 * The stored int8 vector as floats, for LanceDB's column (its nearest-neighbour candidates).
 * An item without one gets a fixed unit vector (a zero vector has no cosine): it may be
 * proposed, and then scores 0 for the words signal like any item without a vector.
 */
export function dequantise(vector: Int8Array | null, dims: number): Float32Array {
  const out = new Float32Array(dims);
  if (vector) for (let i = 0; i < dims; i++) out[i] = (vector[i] ?? 0) / 127;
  else out[0] = 1;
  return out;
}

/** A stored word vector: its bytes as they are (none: empty). */
export const encodeVector = (vector: Int8Array | null): Buffer =>
  vector ? Buffer.from(vector.buffer, vector.byteOffset, vector.length) : Buffer.alloc(0);
/** A stored word vector, as bytes or as the base64 text rows written before were (empty: none). */
export function decodeVector(stored: Uint8Array | string): Int8Array | null {
  const bytes = typeof stored === "string" ? Buffer.from(stored, "base64") : stored;
  return bytes.length ? new Int8Array(bytes) : null;
}

/**
 * `length term term:count`: a count of 1, most terms', is left out (rows written before
 * spell it). Terms hold neither spaces nor colons (they are runs of letters and digits).
 */
export function encodeField(field: FieldTerms | null): string {
  if (!field) return "";
  return [String(field.length), ...[...field.counts].map(([term, n]) => (n === 1 ? term : `${term}:${n}`))].join(" ");
}

/**
 * A stored field; with `only`, just those terms' counts (a search needs the query's terms,
 * not the item's whole vocabulary: found by position, without splitting the text).
 */
export function decodeField(text: string, only?: readonly string[]): FieldTerms | null {
  if (!text) return null;
  if (only) {
    const space = text.indexOf(" ");
    const counts = new Map<string, number>();
    const padded = space < 0 ? "" : text.slice(space);
    for (const term of only) {
      // ` term` then a space, the end (count 1) or `:count`; else a longer term begins so.
      for (let at = padded.indexOf(` ${term}`); at >= 0; at = padded.indexOf(` ${term}`, at + 1)) {
        const next = at + term.length + 1;
        if (next === padded.length || padded[next] === " ") counts.set(term, 1);
        else if (padded[next] === ":") {
          const end = padded.indexOf(" ", next);
          counts.set(term, Number(padded.slice(next + 1, end < 0 ? undefined : end)));
        } else continue;
        break;
      }
    }
    return { length: Number(space < 0 ? text : text.slice(0, space)), counts };
  }
  const [length, ...pairs] = text.split(" ");
  const counts = new Map<string, number>();
  for (const pair of pairs) {
    const at = pair.lastIndexOf(":");
    if (at < 0) counts.set(pair, 1);
    else counts.set(pair.slice(0, at), Number(pair.slice(at + 1)));
  }
  return { length: Number(length), counts };
}

/** The two context fields in one stored column: `before|after`. */
export const encodeContext = (terms: ItemTerms) =>
  terms.before || terms.after ? `${encodeField(terms.before)}|${encodeField(terms.after)}` : "";
export function decodeContext(text: string, only?: readonly string[]): Pick<ItemTerms, "before" | "after"> {
  if (!text) return { before: null, after: null };
  const [before, after] = text.split("|");
  return { before: decodeField(before, only), after: decodeField(after ?? "", only) };
}

/** A forward row as stored: its fields still encoded (a search decodes only its query's terms: `storedTerms`). */
export interface StoredForward {
  terms: string;
  context: string;
  vector: Int8Array | null;
  at: number;
}

/** A stored forward row decoded: the counts of `only` (every term without it), the word vector, the time. */
export function storedTerms(stored: StoredForward, only?: readonly string[]): ItemTerms {
  return {
    text: decodeField(stored.terms, only)!,
    ...decodeContext(stored.context, only),
    vector: stored.vector,
    at: stored.at,
  };
}
