/**
 * The text analyzer: what full-text search matches on, the same for every kind and on both
 * backends (it runs in the app, before the index sees any text).
 *
 * - `fold`: Unicode NFKD, combining marks dropped, then NFC ("café" → "cafe"), a few letters that do
 *   not decompose spelled out ("ß" → "ss", "æ" → "ae", "ø" → "o"), lower case.
 * - `words`: the folded words in order (letters and digits; an apostrophe between two
 *   letters stays inside the word: "don't", "caroline's"; curly apostrophes become straight).
 *   A run of letters is one word in every script, as in the index's own tokenizer, which
 *   gives the search its candidates (Chinese or Japanese text without spaces is matched
 *   by whole runs).
 * - `analyze`: index terms. Lucene's English stop words are dropped, every other word is
 *   stemmed with the Snowball English (Porter2) stemmer, numbers are kept as they are.
 * - `analyzeQuery`: the same with a larger stop list (NLTK's English list, plus Lucene's), so a
 *   question keeps its content words ("what did I say about my allergies" → ["allerg"]); a
 *   query made only of stop words falls back to `analyze`.
 *
 * One rule beyond Porter2: a stem of six letters or more that ends in "i" loses it, so the
 * "-y"/"-ies" and "-ic" forms of a word meet ("allergy", "allergies" → "allergi" → "allerg"
 * = "allergic"; "economy"/"economic", "history"/"historic"). Shorter stems keep their "i"
 * ("parti", "citi") so that short words do not collide.
 *
 * Pure and linear in the input: one regular-expression pass and a stem per word (stems are
 * cached; words longer than {@link MAX_TERM_LENGTH} are no terms at all).
 */
import { stem } from "porter2";

/**
 * Longer words (hashes, identifiers, base64) are not English and no term: the full-text
 * index that proposes candidates drops them too (its tokens are at most 40 characters), and
 * a term is a key of the owner's statistics (PostgreSQL indexes keys up to 8 KB).
 */
const MAX_TERM_LENGTH = 40;

/** Letters that NFKD leaves whole, spelled the way ASCII folding does. */
const SPELLED: Record<string, string> = {
  ß: "ss",
  æ: "ae",
  œ: "oe",
  ø: "o",
  đ: "d",
  ł: "l",
  þ: "th",
  ð: "d",
  ı: "i",
  ŧ: "t",
  ħ: "h",
};
const SPELLED_PATTERN = /[ßæœøđłþðıŧħ]/g;
const COMBINING_MARKS = /\p{M}+/gu;
/** A word: letters and digits, with inner apostrophes. */
const WORD = /[\p{L}\p{N}]+(?:'[\p{L}\p{N}]+)*/gu;
const CURLY_APOSTROPHES = /[\u2019\u2018\u02bc\uff07]/g;

/** Lucene's English stop words (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET). */
export const INDEX_STOP_WORDS: ReadonlySet<string> = new Set(
  "a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with".split(
    " ",
  ),
);

/** NLTK's English stop words (179), for queries; Lucene's are added to them. */
export const QUERY_STOP_WORDS: ReadonlySet<string> = new Set([
  ...INDEX_STOP_WORDS,
  ...(
    "i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he him his himself " +
    "she she's her hers herself it it's its itself they them their theirs themselves what which who whom this that that'll " +
    "these those am is are was were be been being have has had having do does did doing a an the and but if or because as " +
    "until while of at by for with about against between into through during before after above below to from up down in " +
    "out on off over under again further then once here there when where why how all any both each few more most other some " +
    "such no nor not only own same so than too very s t can will just don don't should should've now d ll m o re ve y ain " +
    "aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn " +
    "mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn wouldn't"
  ).split(" "),
]);

/**
 * Folds text for matching: NFKD, accents dropped, lower case.
 *
 * @example
 * fold("Café Straße") // "cafe strasse"
 */
export function fold(text: string): string {
  return text
    .normalize("NFKD")
    .replace(COMBINING_MARKS, "")
    .normalize("NFC") // Hangul syllables, decomposed into letters by NFKD, back together
    .toLowerCase()
    .replace(SPELLED_PATTERN, (letter) => SPELLED[letter]!);
}

/**
 * The folded words of a text, in order, unstemmed.
 *
 * @example
 * words("I don’t like Café-au-lait!") // ["i", "don't", "like", "cafe", "au", "lait"]
 */
export function words(text: string): string[] {
  return fold(text.replace(CURLY_APOSTROPHES, "'")).match(WORD) ?? [];
}

const stems = new Map<string, string>();
const STEM_CACHE_LIMIT = 50_000;

/** The index term of one folded word: Porter2 plus the "-i" rule above; numbers as they are. */
export function term(word: string): string {
  const cached = stems.get(word);
  if (cached !== undefined) return cached;
  let result = word;
  if (!/^\p{N}+$/u.test(word)) {
    result = stem(word);
    if (result.length >= 6 && result.endsWith("i")) result = result.slice(0, -1);
  }
  if (stems.size >= STEM_CACHE_LIMIT) stems.clear();
  stems.set(word, result);
  return result;
}

function termsOf(list: string[], stopWords: ReadonlySet<string>): string[] {
  const terms: string[] = [];
  for (const word of list) if (word.length <= MAX_TERM_LENGTH && !stopWords.has(word)) terms.push(term(word));
  return terms;
}

/**
 * Index terms of a text: its words minus Lucene's English stop words, stemmed.
 *
 * @example
 * analyze("She is allergic to peanuts") // ["she", "allerg", "peanut"]
 */
export function analyze(text: string): string[] {
  return termsOf(words(text), INDEX_STOP_WORDS);
}

/**
 * Terms of a search query: as {@link analyze} with the larger query stop list; when every
 * word is a stop word, {@link analyze}'s terms instead (so "who is it" still searches).
 *
 * @example
 * analyzeQuery("What did I say about my allergies?") // ["say", "allerg"]
 */
export function analyzeQuery(text: string): string[] {
  const list = words(text);
  const terms = termsOf(list, QUERY_STOP_WORDS);
  return terms.length > 0 ? terms : termsOf(list, INDEX_STOP_WORDS);
}

/**
 * The text a search sends LanceDB's full-text index for candidates. That index stems with
 * plain Porter2, so each query word goes with its own term and, where the "-i" rule above
 * may have applied, the term with its "i" back: every item the query's terms match here
 * is matched there too ("allergic" also asks for "allergi", the index's stem of "allergies").
 */
export function candidateQuery(text: string): string {
  const list = words(text);
  const content = list.filter((word) => !QUERY_STOP_WORDS.has(word));
  const chosen = (content.length > 0 ? content : list.filter((word) => !INDEX_STOP_WORDS.has(word))).filter(
    (word) => word.length <= MAX_TERM_LENGTH,
  );
  const out = new Set<string>();
  for (const word of chosen) {
    const t = term(word);
    out.add(word).add(t);
    if (t.length >= 5 && !/^\p{N}+$/u.test(t)) out.add(`${t}i`);
  }
  return [...out].join(" ");
}
