import { describe, expect, it } from 'vitest';
import { storable, storableFields } from '../../src/ingest/wellformed.js';

describe('storable text', () => {
  it('strips ANSI sequences and drops an escape character that starts none Node knows', () => {
    expect(storable('\u001b[31mred\u001b[0m plain')).toBe('red plain');
    // `ESC U` (a fuzzed spinner line, test/ingest/fuzz.test.ts seed 584792186), a lone ESC at the end, an 8-bit CSI alone.
    expect(storable('a\u001bU[1Gb')).toBe('aU[1Gb');
    expect(storable('end \u001b')).toBe('end ');
    expect(storable('c1 \u009b')).toBe('c1 ');
    expect(/[\u001b\u009b]/.test(storable('\u001b\u001b[2K\u001b]0;t\u0007x\u001bZ\u009b'))).toBe(false);
  });

  it('returns the same string when there is nothing to fix, and replaces lone surrogates', () => {
    const text = 'src/app.ts:12 — fine';
    expect(storable(text)).toBe(text);
    expect(storable('bad \ud800 half')).toBe('bad \ufffd half');
    expect(storableFields({ a: 'x\u001bU', b: ['\u001b[1my\u001b[0m'], n: 1 })).toEqual({ a: 'xU', b: ['y'], n: 1 });
  });
});
