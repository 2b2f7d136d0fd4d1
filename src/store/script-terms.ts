/**
 * Index terms for what the word scanner of tokenize.ts cannot split or does not index: scripts
 * written without spaces (Chinese, Japanese, Korean) and emoji (issue #17.10).
 */

/**
 * Version of the index terms. 2 added CJK unigrams and bigrams and emoji terms
 * ({@link scriptTerms}); stores re-index the rows that hold such characters when they open a
 * database indexed at an older version.
 */
export const TERMS_VERSION = 2;

/** Characters {@link scriptTerms} looks at: anything from U+2190 on (symbols, CJK, surrogates). */
const BEYOND_WORDS = /[^\u0000-\u218f]/;

function isCjk(c: number): boolean {
  return (
    (c >= 0x3040 && c <= 0x30ff && c !== 0x30a0 && c !== 0x30fb) || // hiragana, katakana (not ゠ ・)
    (c >= 0x3400 && c <= 0x4dbf) || // CJK extension A
    (c >= 0x4e00 && c <= 0x9fff) || // CJK unified ideographs
    (c >= 0xac00 && c <= 0xd7af) || // hangul syllables
    (c >= 0xf900 && c <= 0xfaff) || // CJK compatibility ideographs
    (c >= 0xff66 && c <= 0xff9f) // halfwidth katakana
  );
}

/** Emoji and pictographs: the BMP's symbol blocks and U+1F000–U+1FAFF. */
function isEmoji(cp: number): boolean {
  return (cp >= 0x2600 && cp <= 0x27bf) || (cp >= 0x2b00 && cp <= 0x2bff) || (cp >= 0x1f000 && cp <= 0x1faff);
}

/**
 * Terms for scripts written without spaces and for emoji, which the word scanner cannot split or
 * does not index (issue #17.10): every CJK character alone and with the next one of its run
 * (`数据库连接` → 数, 数据, 据, 据库 …, so a query for `数据库` or `连接` finds it — the
 * bigram approach of Lucene's CJK analyzer, no ICU needed), and every emoji as `u<hex>` (🚀 →
 * `u1f680`; FTS5's unicode61 and PostgreSQL would drop the symbol itself). Empty for text with
 * nothing from U+2190 on, which is checked first.
 */
export function scriptTerms(text: string): string {
  if (!BEYOND_WORDS.test(text)) return '';
  const out: string[] = [];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x2190) continue;
    if (isCjk(c)) {
      out.push(text[i] as string);
      const d = text.charCodeAt(i + 1);
      if (isCjk(d)) out.push(text.slice(i, i + 2));
      continue;
    }
    const cp = text.codePointAt(i) as number;
    if (isEmoji(cp)) out.push(`u${cp.toString(16)}`);
    if (cp > 0xffff) i++;
  }
  return out.join(' ');
}
