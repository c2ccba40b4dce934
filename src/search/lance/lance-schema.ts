import * as lancedb from "@lancedb/lancedb";
import { Field, FixedSizeList, Float16, Float64, List, Schema, Utf8 } from "apache-arrow";

/** Full-text columns and their weights: the item's own text counts most. */
export const TEXT_COLUMNS = ["text", "context_before", "context_after"];
export const TEXT_BOOSTS = [1, 0.8, 0.3];

/** A row as written to LanceDB. Filter columns are duplicated in every table. */
export interface IndexRow {
  source_key: string;
  owner_id: string;
  kind: string;
  source_id: string;
  item_id: string;
  workspace_id: string | null;
  session_id: string | null;
  document_type: string | null;
  meta: string[];
  created_at: number;
  text: string;
  context_before: string;
  context_after: string;
  /** The item's word vector (items tables only; a fixed unit vector when it has none): nearest-neighbour candidates for the word-vector signal. */
  wvec?: Float32Array;
  vector?: Float32Array;
}

/**
 * A raw hit: the row's keys plus the engine's score (`_score` BM25 or `_distance`). No
 * time: ties are broken with the store of record's, read back for every hit anyway.
 */
export type RawHit = Pick<IndexRow, "kind" | "source_id" | "item_id"> & { _score?: number; _distance?: number };

/** The columns every index table has: the filter columns (duplicated in every table) and the text. */
function filterFields(): Field[] {
  return [
    new Field("source_key", new Utf8(), false),
    new Field("owner_id", new Utf8(), false),
    new Field("kind", new Utf8(), false),
    new Field("source_id", new Utf8(), false),
    new Field("item_id", new Utf8(), false),
    new Field("workspace_id", new Utf8(), true),
    new Field("session_id", new Utf8(), true),
    new Field("document_type", new Utf8(), true),
    new Field("meta", new List(new Field("item", new Utf8(), true)), false),
    new Field("created_at", new Float64(), false),
    new Field("text", new Utf8(), false),
    new Field("context_before", new Utf8(), false),
    new Field("context_after", new Utf8(), false),
  ];
}

/** Dimensions of the word vectors (analysis/word-vectors.bin). */
export const WORD_VECTOR_DIMS = 100;
/**
 * The word vectors as half floats: 200 bytes a row instead of 400. They only propose
 * candidates (an item's words score comes from its int8 vector in the store of record:
 * item-terms.ts), and a half float holds an int8 value / 127 to within 0.0002.
 * Tables made before keep their 32-bit column: LanceDB converts the rows added to them.
 */
export const itemsSchema = () =>
  new Schema([
    ...filterFields(),
    new Field("wvec", new FixedSizeList(WORD_VECTOR_DIMS, new Field("item", new Float16(), true)), false),
  ]);
/**
 * The embedding model's vectors, as half floats too: half the bytes of the index's largest
 * column (768 a row at 384 dimensions); a cosine from them differs from the 32-bit one by
 * well under what the ANN index's 8-bit quantisation already costs. Tables made before keep
 * their 32-bit column, as the word vectors'.
 */
export const vectorSchema = (dimension: number) =>
  new Schema([
    ...filterFields(),
    new Field("vector", new FixedSizeList(dimension, new Field("item", new Float16(), true)), false),
  ]);

/** How text is tokenized for full-text search (the benches build their baseline with the same). */
export const FULL_TEXT_TOKENIZER = {
  withPosition: false,
  baseTokenizer: "simple",
  language: "English",
  stem: true,
  lowercase: true,
  removeStopWords: true,
  asciiFolding: true,
} as const;

/** A full-text index of one column, with `FULL_TEXT_TOKENIZER` (an index object is used once). */
export function fullTextIndex() {
  return lancedb.Index.fts(FULL_TEXT_TOKENIZER);
}
