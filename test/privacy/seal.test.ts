import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readWithTerms } from '../../src/ingest/pool.js';
import { adoptReadBatch, sealReadBatch, SEAL_RULESET } from '../../src/ingest/seal.js';
import { isPlaceholderValue, secretNameKind } from '../../src/privacy/assignment.js';
import { isSealed, sanitizeDeep, sanitizeFields, sealSanitized } from '../../src/privacy/guard.js';
import { sanitize } from '../../src/privacy/redact.js';
import { RULESET_ID } from '../../src/privacy/ruleset.js';
import { factIndexText } from '../../src/store/substrate-rows.js';
import type { FactRecord, TurnRecord } from '../../src/types.js';
import { claudeMain } from '../ingest/helpers.js';
import { LOOK_ALIKES, PLANTED } from './corpus.js';

const secret = (PLANTED.find((p) => p.kind === 'github-token') ?? PLANTED[0])!.secret;

function turn(overrides: Partial<TurnRecord> = {}): TurnRecord {
  return {
    id: 's1:u1',
    sessionId: 's1',
    seq: 0,
    role: 'tool_result',
    text: 'ok',
    toolName: 'Bash',
    toolInput: null,
    toolUseId: 'toolu_1',
    isError: false,
    flags: [],
    at: null,
    sourceUuid: 'u1',
    sourceLine: 1,
    ...overrides,
  };
}

function fact(overrides: Partial<FactRecord> = {}): FactRecord {
  return { id: 'f1', sessionId: 's1', kind: 'path', text: 'src/a.ts', path: null, line: null, note: null, turnId: 's1:u1', seq: 0, role: 'tool_result', toolName: 'Bash', at: null, ...overrides };
}

describe('sealed records at the write boundary', () => {
  it('sanitizes every field but the ones the caller sanitized, then freezes and seals the record', () => {
    const record = turn({ text: 'already clean', toolName: `tool ${secret}`, flags: [`flag ${secret}`], sourceUuid: `API_KEY=${secret}` });
    sealSanitized(record, new Set(['text', 'toolInput']));
    expect(isSealed(record)).toBe(true);
    expect(Object.isFrozen(record)).toBe(true);
    expect(Object.isFrozen(record.flags)).toBe(true);
    expect(JSON.stringify(record)).not.toContain(secret);
    expect(record.toolName).toBe('tool [REDACTED:github-token]');
    expect(record.text).toBe('already clean');
    // The boundary passes it through as it is.
    expect(sanitizeDeep(record)).toBe(record);
  });

  it('cannot be forged by data: a copy of a sealed record, or one claiming a seal in a field, is scanned', () => {
    const record = sealSanitized(turn({ text: 'clean' }), new Set(['text']));
    const copy = { ...structuredClone(record), text: `leak ${secret}`, sealed: true, [Symbol.for('cairn.sealed')]: true };
    expect(isSealed(copy)).toBe(false);
    expect(JSON.stringify(sanitizeDeep(copy))).not.toContain(secret);
    const claim = { text: `[SEALED:${RULESET_ID}] ${secret}`, ruleset: RULESET_ID };
    expect(JSON.stringify(sanitizeDeep(claim))).not.toContain(secret);
  });

  it('seals what ingest reads: turns trusted for text, tool input and terms only; facts scanned whole', () => {
    const batch = { turns: [turn({ id: `s1:${secret}`, text: 'clean', terms: 'clean' })], facts: [fact({ text: `token ${secret}`, note: `password=${secret}` })] };
    sealReadBatch(batch);
    expect(batch.turns.every(isSealed) && batch.facts.every(isSealed)).toBe(true);
    expect(JSON.stringify(batch)).not.toContain(secret);
  });

  it('facts sealed with their index terms: the text cleaned as sealing cleans it, the terms the store would compute from it', () => {
    const facts = [fact({ text: `token ${secret}` }), fact({ id: 'f2', text: 'src/Parser.ts:12' }), fact({ id: 'f2', text: 'src/Parser.ts:12', turnId: 's1:u2' })];
    const plain = facts.map((f) => ({ ...f }));
    sealReadBatch({ turns: [], facts: plain });
    const withTerms = facts.map((f) => ({ ...f }));
    sealReadBatch({ turns: [], facts: withTerms }, factIndexText);
    expect(withTerms.every(isSealed)).toBe(true);
    expect(withTerms.map((f) => f.text)).toEqual(plain.map((f) => f.text));
    expect(JSON.stringify(withTerms)).not.toContain(secret);
    for (const f of withTerms.slice(0, 2)) expect(f.terms).toBe(factIndexText({ text: f.text }));
    expect(withTerms[1]?.terms).toContain('parser');
    // A fact's row is written from its first record in the batch: the others need no terms.
    expect(withTerms[2]?.terms).toBeUndefined();
  });

  it('the same fact text in other facts gets the same terms, from the function given (remembered per function)', () => {
    const facts = [fact({ text: 'src/Parser.ts' }), fact({ id: 'f2', sessionId: 's2', text: 'src/Parser.ts' }), fact({ id: 'f3', text: `src/${secret}.ts` })];
    sealReadBatch({ turns: [], facts }, factIndexText, true);
    expect(facts.map((f) => f.terms)).toEqual(facts.map((f) => factIndexText({ text: f.text })));
    expect(facts[2]?.terms).not.toContain(secret.toLowerCase());
    const again = [fact({ id: 'f4', text: 'src/Parser.ts' })];
    sealReadBatch({ turns: [], facts: again }, (f) => `other ${f.text.length}`, true);
    expect(again[0]?.terms).toBe('other 13');
  });

  it('values under one key, one after another (repeats, secrets, look-alikes), each cleaned as alone', () => {
    const values = [...PLANTED.map((p) => p.text.slice(0, 256)), ...LOOK_ALIKES.map((t) => t.slice(0, 256)), 's1', 's1:u1', 'Bash', `password=${secret}`, 'x'.repeat(300), `${'y'.repeat(290)} ${secret}`];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...values), { minLength: 1, maxLength: 12 }), (sequence) => {
        for (const value of sequence) {
          const record = fact({ sessionId: value, note: value });
          sanitizeFields(record, new Set());
          expect(record.sessionId).toBe(sanitize(value).text);
          expect(record.note).toBe(sanitize(value).text);
          // Under a secret-naming key the whole value is the secret (as in an assignment), as alone.
          const named = value.length >= 4 && !isPlaceholderValue(value) && !/\s/.test(value);
          expect(sanitizeFields({ apiKey: value }, new Set()).apiKey).toBe(named ? `[REDACTED:${secretNameKind('apiKey', false)}]` : sanitize(value).text);
        }
        expect(sanitizeFields({ apiKey: secret }, new Set()).apiKey).toMatch(/^\[REDACTED:/);
        expect(sanitizeFields({ apiKey: 'short value' }, new Set()).apiKey).toBe('short value');
      }),
      { numRuns: 200, seed: 20261127 },
    );
  });

  it('a transcript read for ingest comes with its turns and facts sealed (the boundary skips them)', () => {
    const { batch } = readWithTerms({ path: claudeMain, cursor: null, options: {}, terms: true });
    expect(batch.turns.length).toBeGreaterThan(0);
    expect(batch.turns.every(isSealed)).toBe(true);
    expect((batch.facts ?? []).every(isSealed)).toBe(true);
    expect((batch.facts ?? []).length).toBeGreaterThan(0);
    const firsts = new Map((batch.facts ?? []).map((f) => [f.id, f] as const).reverse());
    expect([...firsts.values()].every((f) => f.terms === factIndexText(f))).toBe(true);
    expect(batch.sessions.some(isSealed) || isSealed(batch.cursor)).toBe(false);
  });

  it('a posted read (a worker) comes sanitized exactly as a sealed one, neither frozen nor sealed', () => {
    const sealed = readWithTerms({ path: claudeMain, cursor: null, options: {}, terms: true });
    const posted = readWithTerms({ path: claudeMain, cursor: null, options: {}, terms: true }, true);
    expect(posted.batch.turns.some(isSealed) || (posted.batch.facts ?? []).some(isSealed)).toBe(false);
    expect(posted.batch.turns.some(Object.isFrozen)).toBe(false);
    const records = (r: typeof sealed) => JSON.stringify([r.batch.turns, r.batch.facts]);
    expect(records(posted)).toBe(records(sealed));
    // What the writing thread does with it: adopt, then the boundary passes it through.
    adoptReadBatch(posted.batch, SEAL_RULESET);
    expect(posted.batch.turns.every(isSealed) && (posted.batch.facts ?? []).every(isSealed)).toBe(true);
  });

  it('sanitizeFields cleans a record field by field as sealSanitized does (keys and nested values too)', () => {
    const dirty = (): Record<string, unknown> => ({
      ...turn({ text: 'already clean', toolName: `tool ${secret}`, flags: [`flag ${secret}`], sourceUuid: `API_KEY=${secret}` }),
      apiKey: 'hunter2hunter2',
      [`key ${secret}`]: 'named by a secret',
      nested: { password: 's3cr3t-value', list: [`x ${secret}`] },
    });
    const a = sealSanitized(dirty(), new Set(['text']));
    const b = sanitizeFields(dirty(), new Set(['text']));
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    expect(JSON.stringify(b)).not.toContain(secret);
    expect(isSealed(b) || Object.isFrozen(b)).toBe(false);
    expect(isSealed(a) && Object.isFrozen(a)).toBe(true);
  });

  it('adopts the seals of a worker only when it redacts with the same ruleset', () => {
    const from = (ruleset: string | null) => {
      const batch = { turns: [turn()], facts: [fact()] };
      adoptReadBatch(batch, ruleset);
      return [...batch.turns, ...batch.facts].map(isSealed);
    };
    expect(SEAL_RULESET).toBe(RULESET_ID);
    expect(from(RULESET_ID)).toEqual([true, true]);
    expect(from('0000000000000000')).toEqual([false, false]);
    expect(from(null)).toEqual([false, false]);
  });

  // The reader stores `trim(sanitize(full text))` (bounded texts are sanitized again after the cut,
  // see BatchBuilder.cut): trimming never exposes anything the sanitizer would still redact.
  it('a trimmed sanitized text is its own sanitization (planted secrets, look-alikes, random whitespace)', () => {
    const pieces = [...PLANTED.map((p) => p.text), ...LOOK_ALIKES, 'password', 'machine example.com', 'API_KEY', '=', ':', '-u', 'Bearer', '<private>', '</private>'];
    const space = fc.constantFrom(' ', '\n', '\t', '\r\n', '', '  \n ');
    fc.assert(
      fc.property(fc.array(fc.tuple(space, fc.constantFrom(...pieces), space), { minLength: 1, maxLength: 6 }), (parts) => {
        const text = parts.map(([a, p, b]) => `${a}${p}${b}`).join('');
        const stored = sanitize(text).text.trim();
        expect(sanitize(stored).text).toBe(stored);
      }),
      { numRuns: 400, seed: 20261126 },
    );
  });
});
