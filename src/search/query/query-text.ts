/**
 * Query normalisation for full-text search. The index's own stop list is Lucene's 33
 * words, which keeps question words ("what", "did", "how", "you") that then match every
 * question ever stored. Queries drop a fuller English list (NLTK's), possessive 's, and
 * punctuation; documents keep every word. A query made only of such words is kept as is.
 */
const STOP_WORDS = new Set(
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

/** Words of a query worth matching, lowercase, in order, possessives removed. */
export function queryTerms(query: string): string[] {
  const words = query.toLowerCase().normalize("NFKC").replace(/['’]s\b/g, "").match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((word) => !STOP_WORDS.has(word));
}

/** The text sent to the full-text index: the query's content words, or the query itself. */
export function fullTextQuery(query: string): string {
  const terms = queryTerms(query);
  return terms.length ? terms.join(" ") : query;
}
