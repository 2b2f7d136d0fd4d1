import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { detectPushback, readTranscript, type TranscriptFormat } from '../../src/ingest/index.js';
import { bound } from '../../src/ingest/text.js';
import { outcomeTotal } from '../../src/ingest/types.js';
import { fixtures, repoRoot, tempDir } from './helpers.js';

/** Real-format lines from the fixtures, by format. */
function linesOf(format: TranscriptFormat, ...parts: string[]): { format: TranscriptFormat; lines: string[] } {
  const dir = join(fixtures, ...parts);
  const files = statSync(dir).isDirectory() ? readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith('.jsonl')).map((f) => join(dir, f)) : [dir];
  return { format, lines: files.flatMap((f) => readFileSync(f, 'utf8').split('\n')).filter((l) => l.length > 0) };
}

/** Real lines from ../shared/data when it is there (at most 400 per format, none over 20 kB). */
const shared = resolve(repoRoot, '../shared/data/transcripts');
function realLines(format: TranscriptFormat, dir: string): string[] {
  const root = join(shared, dir);
  if (!existsSync(root)) return [];
  const out: string[] = [];
  for (const file of readdirSync(root, { recursive: true }).map(String).sort()) {
    if (!file.endsWith('.jsonl') || file.includes('expected-')) continue;
    for (const line of readFileSync(join(root, file), 'utf8').split('\n')) {
      if (line.length > 0 && line.length < 20_000 && out.length < 400) out.push(line);
    }
  }
  return out;
}

const CORPORA = [
  linesOf('claude-code', 'claude-code'),
  linesOf('codex', 'codex'),
  linesOf('gemini-jsonl', 'gemini/tmp/9f86d081/chats/session-2026-04-01T08-00-gemjsonl.jsonl'),
  linesOf('cursor', 'cursor'),
  linesOf('generic', 'generic'),
].map(({ format, lines }) => ({ format, lines: [...lines, ...realLines(format, format === 'gemini-jsonl' ? 'gemini' : format)] }));

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Replace the value at a random path of a JSON value. */
function mutateAt(value: Json, path: number[], replacement: Json): Json {
  if (path.length === 0 || value === null || typeof value !== 'object') return replacement;
  const [step = 0, ...rest] = path;
  if (Array.isArray(value)) {
    if (value.length === 0) return replacement;
    const i = step % value.length;
    return value.map((v, j) => (j === i ? mutateAt(v, rest, replacement) : v));
  }
  const keys = Object.keys(value);
  if (keys.length === 0) return replacement;
  const key = keys[step % keys.length] as string;
  return { ...value, [key]: mutateAt(value[key] as Json, rest, replacement) };
}

const jsonValue = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;

/** One line mutated the ways transcripts break: structure, truncation, junk bytes, swapped keys. */
function mutatedLine(lines: string[]): fc.Arbitrary<string> {
  const original = fc.constantFrom(...lines);
  return fc.oneof(
    original,
    fc.tuple(original, fc.array(fc.nat(), { maxLength: 5 }), jsonValue).map(([line, path, value]) => {
      try {
        return JSON.stringify(mutateAt(JSON.parse(line) as Json, path, value));
      } catch {
        return line;
      }
    }),
    fc.tuple(original, fc.nat()).map(([line, at]) => line.slice(0, at % (line.length + 1))),
    fc.tuple(original, fc.nat(), fc.string({ unit: 'binary', maxLength: 20 })).map(([line, at, junk]) => {
      const i = at % (line.length + 1);
      return `${line.slice(0, i)}${junk}${line.slice(i)}`.replaceAll('\n', ' ');
    }),
    fc.tuple(original, fc.constantFrom('"type":"', '"role":"', '"content":', '"message":', '"payload":')).map(([line, key]) => line.replace(key, '"xx":"')),
    fc.string({ unit: 'binary', maxLength: 200 }).map((s) => s.replaceAll('\n', ' ')),
  );
}

/** Every string of a batch is well-formed UTF-16 (so valid UTF-8 once stored) and holds no escape sequence. */
function expectStorable(batch: object): void {
  const walk = (value: unknown, where: string): void => {
    if (typeof value === 'string') {
      expect((value as unknown as { isWellFormed(): boolean }).isWellFormed(), `${where}: lone surrogate`).toBe(true);
      if (!where.startsWith('cursor')) expect(/[\u001b\u009b]/.test(value), `${where}: escape sequence`).toBe(false);
    } else if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${where}[${i}]`));
    else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, where === '' ? k : `${where}.${k}`);
  };
  const { cursor: _cursor, ...records } = batch as { cursor?: unknown };
  walk(records, '');
}

/** A string with lone surrogates, ANSI colour and OSC sequences spliced into it. */
const hostile = fc
  .tuple(
    fc.string({ maxLength: 40 }),
    fc.array(fc.constantFrom('\ud800', '\udfff', '\ud83d', '\u001b[31m', '\u001b[0m', '\u001b]0;title\u0007', '\u001b[2K\u001b[1G', '\u009b1m', 'sk-ant-api03-'), { minLength: 1, maxLength: 6 }),
    fc.string({ maxLength: 40 }),
  )
  .map(([a, parts, b]) => `${a}${parts.join('x')}${b}`);

describe('readers under fuzzing (mutated real-format lines: fixtures, and ../shared/data when present)', () => {
  const dir = tempDir('cairn-fuzz-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;

  for (const { format, lines } of CORPORA) {
    it(`${format}: nothing throws, every line is accounted for, incremental = whole`, () => {
      fc.assert(
        fc.property(fc.array(mutatedLine(lines), { minLength: 1, maxLength: 30 }), fc.nat(), (mutated, cut) => {
          const path = join(dir, `f${n++}.jsonl`);
          const content = `${mutated.join('\n')}\n`;
          writeFileSync(path, content);
          const whole = readTranscript(path, null, { format });
          expect(whole.stats.lines).toBe(mutated.length);
          // Every line is stored or counted, under exactly one outcome.
          expect(outcomeTotal(whole.stats.outcomes)).toBe(whole.stats.lines);
          expect(whole.stats.outcomes.bad).toBeLessThanOrEqual(whole.stats.badLines.length);
          expectStorable(whole.batch);
          expect(whole.stats.badLines.length).toBeLessThanOrEqual(mutated.length);
          for (const turn of whole.batch.turns) {
            expect(typeof turn.text).toBe('string');
            expect(turn.id.startsWith(turn.sessionId)).toBe(true);
          }
          // The same bytes read in two passes split at any byte give the same turns.
          const split = cut % (content.length + 1);
          writeFileSync(path, content.slice(0, split));
          const first = readTranscript(path, null, { format });
          writeFileSync(path, content);
          const second = readTranscript(path, first.batch.cursor, { format });
          const ids = new Set([...first.batch.turns, ...second.batch.turns].map((t) => t.id));
          for (const turn of whole.batch.turns) expect(ids.has(turn.id)).toBe(true);
          rmSync(path);
        }),
        { numRuns: 150 },
      );
    }, 120_000);
  }

  it('JSON chat documents: nothing throws on mutated Gemini sessions', () => {
    const doc = JSON.parse(readFileSync(join(fixtures, 'gemini/tmp/9f86d081/chats/session-2026-03-01T12-00-7c9e6679.json'), 'utf8')) as Json;
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.array(fc.nat(), { maxLength: 6 }), jsonValue), { maxLength: 4 }), fc.nat(), (edits, cut) => {
        let mutated = doc;
        for (const [path, value] of edits) mutated = mutateAt(mutated, path, value);
        const text = JSON.stringify(mutated);
        const path = join(dir, `g${n++}.json`);
        writeFileSync(path, cut % 5 === 0 ? text.slice(0, cut % text.length) : text);
        const result = readTranscript(path, null, { format: 'gemini-json' });
        expect(result.stats.lines).toBe(1);
        rmSync(path);
      }),
      { numRuns: 200 },
    );
  });

  it('lone surrogates and escape sequences in any field are never stored (as JSON escapes and as raw bytes)', () => {
    fc.assert(
      fc.property(hostile, hostile, hostile, fc.boolean(), (words, output, id, raw) => {
        const lines = [
          { type: 'user', uuid: `u-${id}`, sessionId: `s-${id}`, cwd: `/home/${id}`, timestamp: '2026-01-01T00:00:00Z', message: { role: 'user', content: words } },
          { type: 'assistant', uuid: `a-${id}`, sessionId: `s-${id}`, message: { id: `m-${id}`, role: 'assistant', content: [{ type: 'tool_use', id: `t-${id}`, name: 'Bash', input: { command: `echo ${words}` } }] } },
          { type: 'user', uuid: `r-${id}`, sessionId: `s-${id}`, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t-${id}`, content: output }] } },
        ].map((l) => JSON.stringify(l));
        const path = join(dir, `h${n++}.jsonl`);
        // JSON.stringify escapes lone surrogates (\ud800); written raw they are invalid UTF-8 bytes.
        const text = `${lines.join('\n')}\n`;
        writeFileSync(path, raw ? Buffer.from(text.replace(/\\u(d[89a-f][0-9a-f]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'utf8') : text);
        const result = readTranscript(path, null, { format: 'claude-code' });
        expect(outcomeTotal(result.stats.outcomes)).toBe(result.stats.lines);
        expect(result.batch.turns.length).toBeGreaterThan(0);
        expectStorable(result.batch);
        rmSync(path);
      }),
      { numRuns: 300 },
    );
  });

  it('Aider histories: nothing throws on shuffled and cut markdown', () => {
    const lines = readFileSync(join(fixtures, 'aider/repo/.aider.chat.history.md'), 'utf8').split('\n');
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...lines), fc.string({ maxLength: 40 })), { maxLength: 60 }), fc.nat(), (picked, cut) => {
        const content = `${picked.join('\n')}\n`;
        const path = join(dir, `a${n++}.aider.chat.history.md`);
        writeFileSync(path, content.slice(0, cut % (content.length + 1)));
        const first = readTranscript(path, null);
        writeFileSync(path, content);
        readTranscript(path, first.batch.cursor);
        rmSync(path);
      }),
      { numRuns: 200 },
    );
  });

  it('the correction finder and the text bound never throw', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.integer({ min: 1, max: 400 }), (text, max) => {
        detectPushback(text);
        const bounded = bound(text, max);
        expect(bounded.length).toBeLessThanOrEqual(Math.max(text.length, max + 40));
        if (text.length <= max) expect(bounded).toBe(text);
      }),
      { numRuns: 500 },
    );
  });
});
