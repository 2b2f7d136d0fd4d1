/**
 * Character access for the secret scanners, which look a few characters before and after each
 * anchor and so often ask for one before the text's start or past its end.
 */

/** What {@link codeAt} gives outside the text: larger than any UTF-16 code unit, so it equals no character and falls in no range of them. */
export const OUTSIDE = 0x10000;

/**
 * `text.charCodeAt(i)`, or {@link OUTSIDE} when `i` is not in the text (where `charCodeAt` gives
 * NaN: every test the scanners make — equal to a character, within a range, `< 128` before a
 * table look-up — is false for both). Indexing past either end, or a NaN where only small
 * integers had been seen, makes V8 throw away a scanner's optimized code once per call site:
 * with some thirty such sites the hot scanners were compiled ten or twelve times over in every
 * ingest worker before they settled.
 */
export function codeAt(text: string, i: number): number {
  return i >= 0 && i < text.length ? text.charCodeAt(i) : OUTSIDE;
}
