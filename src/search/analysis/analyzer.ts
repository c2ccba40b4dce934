import { stem } from "porter2";

/**
 * The full-text analyzer, the same one LanceDB's index is configured with (lance-schema.ts:
 * simple tokenizer, lowercase, ASCII folding, English stop words, Snowball English stems),
 * so that Mnemo's own scoring counts the terms the index matched.
 */
const STORED_STOP_WORDS = new Set(
  "a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with".split(" "),
);

/** Lowercase, accents and other marks removed. */
export function fold(text: string): string {
  return text.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase();
}

/** Folded words (letters and digits), in order. */
export function words(text: string): string[] {
  return fold(text).match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Index terms of a text: its words minus stop words, stemmed. */
export function analyze(text: string): string[] {
  const terms: string[] = [];
  for (const word of words(text)) if (!STORED_STOP_WORDS.has(word) && word.length <= 40) terms.push(stem(word));
  return terms;
}

const QUERY_STOP_WORDS = new Set(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself
  it its itself they them their theirs themselves what which who whom this that these those am is are was were be
  been being have has had having do does did doing a an the and but if or because as until while of at by for with
  about against between into through during before after above below to from up down in out on off over under again
  further then once here there when where why how all any both each few more most other some such no nor not only
  own same so than too very s t can will just don should now d ll m o re ve y ain aren couldn didn doesn hadn hasn
  haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn would could might shall may also ever`
    .split(/\s+/)
    .filter(Boolean),
);

/** Query terms: the query's content words (a fuller stop list than the index's), stemmed; all words when none is left. */
export function analyzeQuery(text: string): string[] {
  const all = words(text.replace(/['’]s\b/g, ""));
  const content = all.filter((word) => !QUERY_STOP_WORDS.has(word));
  return content.length ? content.map((word) => stem(word)) : analyze(text);
}
