import { describe, expect, it } from 'vitest';
import { sanitize } from '../../src/privacy/redact.js';
import { CONTEXTUAL, LOOK_ALIKES, PLANTED } from './corpus.js';

/** True when some run of 9+ characters of `secret` survives in `text`. */
function leaks(text: string, secret: string): boolean {
  for (let i = 0; i + 9 <= secret.length; i++) if (text.includes(secret.slice(i, i + 9))) return true;
  return false;
}

describe('secret ruleset (true and false positives)', () => {
  it('covers at least 40 kinds', () => {
    expect(new Set(PLANTED.map((p) => p.kind)).size).toBeGreaterThanOrEqual(40);
  });

  for (const planted of PLANTED) {
    it(`redacts ${planted.kind}`, () => {
      const { text, found } = sanitize(planted.text);
      expect(leaks(text, planted.secret), text).toBe(false);
      expect(Object.keys(found)).toContain(planted.kind);
    });

    it(`redacts ${planted.kind} inside escaped JSON (a tool input) and twice-escaped JSON`, () => {
      const once = JSON.stringify({ command: planted.text });
      const twice = JSON.stringify({ tool_input: once });
      const texts = [once, twice];
      // A token that names itself is found at the start of an escaped line too.
      if (!CONTEXTUAL.has(planted.kind)) texts.push(JSON.stringify({ content: `output:\n${planted.secret}\n` }));
      for (const text of texts) expect(leaks(sanitize(text).text, planted.secret), text).toBe(false);
    });
  }

  for (const text of LOOK_ALIKES) {
    it(`keeps look-alike: ${text.slice(0, 50)}`, () => {
      expect(sanitize(text)).toEqual({ text, found: {} });
    });
  }

  it('treats word.word123 as a value, not as code', () => {
    expect(sanitize('DB_PASSWORD=hunter.horse42').text).toBe('DB_PASSWORD=[REDACTED:env-assignment]');
    expect(sanitize('password: summer.breeze2024').text).toBe('password: [REDACTED:env-assignment]');
    expect(sanitize('password = config.password').text).toBe('password = config.password');
  });

  it('is idempotent on every planted text', () => {
    for (const planted of PLANTED) {
      const once = sanitize(planted.text).text;
      expect(sanitize(once)).toEqual({ text: once, found: {} });
    }
  });
});
