/**
 * Strings no rule of the ruleset can redact, recognised by shape alone, so the write boundary
 * passes them over without a scan: ingest seals a few unique ids per record (a fact's id, a
 * turn's source uuid), each of which would otherwise cost a full {@link findSecrets} pass and a
 * place in the sanitizer's memo.
 *
 * Two shapes, each a short string over a small alphabet:
 * - lower-case letters and digits, at most {@link INERT_WORD_MAX} characters (cairn's fact ids
 *   `f3k9w2m7q1xz`, role and kind names);
 * - a canonical lower-case UUID (`196820da-1026-4b6f-a513-a6aae42da1a6`: 36 characters of
 *   `[0-9a-f-]`, dashes at 8, 13, 18 and 23, so never two together).
 *
 * Why nothing can match them (test/privacy/inert.test.ts checks each step against the tables, so
 * a rule added later that could match fails the test rather than leaking a secret): every shape
 * of detectors.ts and prefixed token of rules.ts needs, over the shape's alphabet, a match longer
 * than the shape allows or a character outside it; assignments need `=` or `:`, `.netrc`
 * passwords a space or a tab, `<private>` a `<`, and the dash probes a `k t p i x` or `u` next to
 * a dash, or two dashes — none of them in these alphabets.
 *
 * @see findSecrets in detectors.ts
 */

/** The longest lower-case alphanumeric string that {@link cannotHoldSecret} passes over. */
export const INERT_WORD_MAX = 32;

/** Length of a canonical UUID. */
const UUID_LENGTH = 36;

/**
 * Whether `text` is of a shape that no rule of this ruleset can redact (see the module comment):
 * then `sanitize(text).text === text`, and the scan can be skipped. False says nothing.
 */
export function cannotHoldSecret(text: string): boolean {
  const n = text.length;
  if (n === UUID_LENGTH) return isCanonicalUuid(text);
  if (n > INERT_WORD_MAX) return false;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57))) return false;
  }
  return true;
}

/** `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, lower-case hex (36 characters; the caller checked the length). */
function isCanonicalUuid(text: string): boolean {
  for (let i = 0; i < UUID_LENGTH; i++) {
    const c = text.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return false;
    } else if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) {
      return false;
    }
  }
  return true;
}
