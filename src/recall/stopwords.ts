/**
 * English function words left out of full-text queries. BM25 already gives them little weight,
 * but in a small index (one project, a few thousand memories) "what did she do" still pulls in
 * every memory that says "did", and they dilute query-term coverage. Only whole words between
 * spaces or sentence punctuation are dropped: `this.state`, `is_valid` and `don't` stay intact.
 */
const WORDS =
  'a an the is was were are am be been being did do does doing done what when where who whom whose which why how ' +
  'to of in on at for with and or by from that this these those it its as has have had having ' +
  'i you he she they we me my mine your yours his her hers their theirs our ours us him them ' +
  'not no about into than then there here so if would could should will shall can may might must ' +
  'any some all each every both either neither such own same other very too also just only ' +
  'up down out over under again further once ever while during before after above below between ' +
  'through because until against off s t';

export const STOPWORDS: ReadonlySet<string> = new Set(WORDS.split(' '));

// A word is a run of letters, digits or apostrophes bounded by the start/end, whitespace, or
// sentence punctuation — never by code joiners such as . / : _ - that make compounds.
const WORD = /(^|[\s,;!?()[\]{}"“”«»]+)([\p{L}\p{N}']+)(?=$|[\s,;!?()[\]{}"“”«»]+)/gu;

/**
 * `query` without its English function words, or `query` itself when nothing else would be left
 * (a query of stopwords only is searched as typed).
 *
 * @example
 * contentQuery('What did Melanie paint?') // 'Melanie paint?'
 */
export function contentQuery(query: string): string {
  const stripped = query.replace(WORD, (whole, lead: string, word: string) =>
    STOPWORDS.has(word.toLowerCase().replace(/'/g, '')) ? lead : whole,
  );
  return /[\p{L}\p{N}]/u.test(stripped) ? stripped.replace(/\s{2,}/g, ' ').trim() : query;
}
