/**
 * src/privacy/inert.ts passes strings of two shapes over unscanned. These tests prove from the
 * rule tables that no rule can redact anything in them: every span `findSecrets` and
 * `stripPrivate` can make comes from (1) a shape's regex in detectors.ts, (2) a prefixed token's
 * regex in rules.ts, (3) the `.netrc` regex, (4) an assignment at a `=` or `:`, or (5) a
 * `<private>` tag. For (1)–(3) each regex's shortest match over the shape's alphabet is computed
 * from its source (lookarounds and anchors count as nothing, which can only make it shorter) and
 * must exceed the shape's longest string, or be impossible; for (4) and (5) the characters are
 * not in the alphabet. A rule added later that could match an inert string fails here.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findSecrets, DETECTOR_RULES } from '../../src/privacy/detectors.js';
import { sanitizeDeep } from '../../src/privacy/guard.js';
import { cannotHoldSecret, INERT_WORD_MAX } from '../../src/privacy/inert.js';
import { sanitize } from '../../src/privacy/redact.js';
import { NETRC_PASSWORD, PREFIX_RULES } from '../../src/privacy/rules.js';
import { PLANTED } from './corpus.js';

/**
 * The length of the shortest string over `alphabet` that `source` can match (Infinity when none
 * can). Lookarounds, `^`, `$`, `\b` and `\B` match nothing and are taken as always true. Throws
 * on syntax it does not know (backreferences, named groups), so a new construct is not misread.
 */
function shortestMatch(source: string, flags: string, alphabet: readonly string[]): number {
  const plainFlags = flags.replace(/[gy]/g, '');
  const matchesOne = (atom: string): boolean => alphabet.some((ch) => new RegExp(`^(?:${atom})$`, plainFlags).test(ch));
  let i = 0;
  const fail = (what: string): never => {
    throw new Error(`${what} at ${i} of /${source}/`);
  };
  const alternation = (): number => {
    let best = sequence();
    while (source[i] === '|') {
      i++;
      best = Math.min(best, sequence());
    }
    return best;
  };
  const sequence = (): number => {
    let total = 0;
    while (i < source.length && source[i] !== '|' && source[i] !== ')') {
      const one = atom();
      const least = quantifier();
      total += least === 0 ? 0 : one * least;
    }
    return total;
  };
  const quantifier = (): number => {
    let least = 1;
    const c = source[i];
    if (c === '?' || c === '*') {
      least = 0;
      i++;
    } else if (c === '+') {
      i++;
    } else if (c === '{') {
      const m = /^\{(\d+)(,\d*)?\}/.exec(source.slice(i));
      if (m === null) fail('a bad quantifier');
      least = Number(m![1]);
      i += m![0].length;
    } else {
      return least;
    }
    if (source[i] === '?') i++; // lazy
    return least;
  };
  const group = (): number => {
    let zeroWidth = false;
    if (source.startsWith('(?:', i)) i += 3;
    else if (source.startsWith('(?=', i) || source.startsWith('(?!', i)) (i += 3), (zeroWidth = true);
    else if (source.startsWith('(?<=', i) || source.startsWith('(?<!', i)) (i += 4), (zeroWidth = true);
    else if (source.startsWith('(?', i)) fail('an unknown group');
    else i += 1;
    const inner = alternation();
    if (source[i] !== ')') fail('an unclosed group');
    i++;
    return zeroWidth ? 0 : inner;
  };
  const atom = (): number => {
    const c = source[i] as string;
    if (c === '(') return group();
    if (c === '[') {
      let j = i + 1;
      if (source[j] === '^') j++;
      if (source[j] === ']') j++;
      while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
      if (j >= source.length) fail('an unclosed class');
      const cls = source.slice(i, j + 1);
      i = j + 1;
      return matchesOne(cls) ? 1 : Infinity;
    }
    if (c === '\\') {
      const e = source[i + 1] as string;
      i += 2;
      if (e === 'b' || e === 'B') return 0;
      if (/[1-9kuxcp]/.test(e)) fail(`an escape \\${e} this parser does not read`);
      return matchesOne(`\\${e}`) ? 1 : Infinity;
    }
    if (c === '^' || c === '$') {
      i++;
      return 0;
    }
    if ('*+?{'.includes(c)) fail('a quantifier without an atom');
    i++;
    return matchesOne(c === '.' ? '.' : c.replace(/[/]/g, '\\/')) ? 1 : Infinity;
  };
  const least = alternation();
  if (i !== source.length) fail('an unexpected )');
  return least;
}

const range = (from: string, to: string): string[] =>
  Array.from({ length: to.charCodeAt(0) - from.charCodeAt(0) + 1 }, (_, k) => String.fromCharCode(from.charCodeAt(0) + k));

const SHAPES = [
  { name: 'lower-case alphanumeric words', alphabet: [...range('0', '9'), ...range('a', 'z')], longest: INERT_WORD_MAX },
  { name: 'canonical UUIDs', alphabet: [...range('0', '9'), ...range('a', 'f'), '-'], longest: 36 },
];

/** Every regex the scanners run, with what names it. */
const REGEXES: Array<{ rule: string; source: string; flags: string }> = [
  ...DETECTOR_RULES.map((line) => {
    const first = line.indexOf(' ');
    const last = line.lastIndexOf(' ');
    return { rule: `detector ${line.slice(0, first)}`, source: line.slice(first + 1, last), flags: line.slice(last + 1) };
  }),
  ...PREFIX_RULES.map((r) => ({ rule: `prefixed ${r.kind} (${r.prefix})`, source: r.pattern.source, flags: r.pattern.flags })),
  { rule: 'netrc password', source: NETRC_PASSWORD.source, flags: NETRC_PASSWORD.flags },
];

describe('the shortest-match computation', () => {
  it('measures known patterns', () => {
    const hex = [...range('0', '9'), ...range('a', 'f')];
    expect(shortestMatch('ab{3,}(?:c|de)?x', '', [...range('a', 'z')])).toBe(5);
    expect(shortestMatch('(?<![\\w-])()(dapi[a-f0-9]{32}(?:-\\d)?)(?![A-Za-z0-9_])', 'y', [...range('a', 'z'), ...range('0', '9')])).toBe(36);
    expect(shortestMatch('sk-[a-z]{4}', 'y', hex)).toBe(Infinity);
    expect(shortestMatch('BEARER[ \\t]+x', 'iy', [...range('a', 'z'), ' '])).toBe(8);
    expect(shortestMatch('BEARER x', 'y', range('a', 'z'))).toBe(Infinity);
    expect(() => shortestMatch('(a)\\1', '', ['a'])).toThrow(/escape/);
  });
});

describe.each(SHAPES)('$name cannot hold a secret', ({ alphabet, longest }) => {
  it.each(REGEXES)('$rule: no match fits', ({ source, flags }) => {
    expect(shortestMatch(source, flags, alphabet)).toBeGreaterThan(longest);
  });

  it('assignments (at = or :) and <private> tags need a character outside the alphabet', () => {
    for (const ch of ['=', ':', '<']) expect(alphabet).not.toContain(ch);
  });
});

describe('cannotHoldSecret', () => {
  const uuid = fc.uuid().filter((u) => u === u.toLowerCase());
  const word = fc.stringMatching(new RegExp(`^[0-9a-z]{0,${INERT_WORD_MAX}}$`));

  it('recognises exactly the two shapes', () => {
    expect(cannotHoldSecret('196820da-1026-4b6f-a513-a6aae42da1a6')).toBe(true);
    expect(cannotHoldSecret('f3k9w2m7q1xz')).toBe(true);
    expect(cannotHoldSecret('a'.repeat(INERT_WORD_MAX))).toBe(true);
    expect(cannotHoldSecret('a'.repeat(INERT_WORD_MAX + 1))).toBe(false);
    expect(cannotHoldSecret('196820DA-1026-4b6f-a513-a6aae42da1a6')).toBe(false);
    expect(cannotHoldSecret('196820da-1026-4b6f-a513-a6aae42da1a-')).toBe(false);
    expect(cannotHoldSecret('196820da-1026-4b6f-a513-a6aae42da1ag')).toBe(false);
    expect(cannotHoldSecret('196820da--026-4b6f-a513-a6aae42da1a6')).toBe(false);
    expect(cannotHoldSecret('hf_abc')).toBe(false);
    expect(cannotHoldSecret('Bearer')).toBe(false);
    // The privacy corpus' planted secrets in their texts: none of those texts is inert; a secret
    // of an inert shape alone (`hunter2x`, found by its key) is one the scan leaves as it is.
    for (const p of PLANTED) {
      expect(cannotHoldSecret(p.text)).toBe(false);
      if (cannotHoldSecret(p.secret)) expect(sanitize(p.secret).text).toBe(p.secret);
    }
  });

  it('says so only of strings the sanitizer leaves as they are (random ids and words)', () => {
    fc.assert(
      fc.property(fc.oneof(uuid, word), (s) => {
        expect(cannotHoldSecret(s)).toBe(true);
        expect(findSecrets(s)).toEqual([]);
        expect(sanitize(s).text).toBe(s);
      }),
      { numRuns: 5_000 },
    );
  });

  it('holds for words made of the prefixes that fit the alphabet, padded to the longest', () => {
    const fitting = PREFIX_RULES.map((r) => r.prefix).filter((p) => /^[0-9a-z]+$/.test(p));
    expect(fitting.length).toBeGreaterThan(0);
    for (const prefix of fitting) {
      for (const pad of ['0', 'a', 'f', '9', 'x']) {
        const s = (prefix + pad.repeat(INERT_WORD_MAX)).slice(0, INERT_WORD_MAX);
        expect(cannotHoldSecret(s)).toBe(true);
        expect(sanitize(s).text).toBe(s);
      }
    }
  });

  it('leaves the write boundary output unchanged: an id under a secret-naming key is still redacted', () => {
    // The key decides there, not the scan: inert strings skip only the scan of the text.
    expect(sanitizeDeep({ apiKey: 'f3k9w2m7q1xz' })).toEqual({ apiKey: '[REDACTED:env-assignment]' });
    expect(sanitizeDeep({ id: 'f3k9w2m7q1xz', sessionId: '196820da-1026-4b6f-a513-a6aae42da1a6' })).toEqual({
      id: 'f3k9w2m7q1xz',
      sessionId: '196820da-1026-4b6f-a513-a6aae42da1a6',
    });
  });
});
