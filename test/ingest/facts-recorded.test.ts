/**
 * The fact extractor's output pinned: every speed change to extraction must give the same facts,
 * in the same order, with the same fields, the same redaction count and the same command, path,
 * first line and note. The expected facts are digests recorded with a copy of src/ingest/facts as
 * of a63e38d (the extractor before the fifteenth round's speed changes, checked against it input by
 * input while they were made); a change to what extraction finds fails here, and must update these
 * digests with the reason in its commit.
 *
 * The inputs are what the readers hand the extractor: every tool call, tool output, user,
 * assistant and system text of the fixtures' transcripts and of ../shared's (when present),
 * captured from the real readers, each run both as the builder runs it (sanitized whole) and
 * unsanitized (the sink redacting each fact in its line); then synthetic edge cases (Windows
 * paths, huge lines, replacement characters, CRLF, caps reached) and 3,000 seeded random mixtures
 * of the fragments every scanner looks for.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { readTranscript } from '../../src/ingest/index.js';
import { extractTurnFacts, type TurnFactInput } from '../../src/ingest/facts/extract.js';
import { fixtures, repoRoot } from './helpers.js';

const captured: TurnFactInput[] = [];
let capturing = false;

vi.mock('../../src/ingest/facts/extract.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/ingest/facts/extract.js')>();
  return {
    ...original,
    extractTurnFacts: (input: TurnFactInput) => {
      if (capturing) captured.push(structuredClone(input));
      return original.extractTurnFacts(input);
    },
  };
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : []));
}

/** Every extractor input one read of `dir`'s files makes. */
function inputsOf(dir: string): TurnFactInput[] {
  captured.length = 0;
  capturing = true;
  try {
    for (const path of filesUnder(dir)) readTranscript(path, null);
  } finally {
    capturing = false;
  }
  return captured.splice(0);
}

/** The facts of each input, sanitized and not (`both`), in order, hashed (16 hex digits). */
function factsDigest(inputs: readonly TurnFactInput[], both = true): string {
  const hash = createHash('sha256');
  for (const input of inputs) {
    for (const variant of both ? [input, { ...input, sanitized: !(input.sanitized ?? false) }] : [input]) hash.update(JSON.stringify(extractTurnFacts(variant))).update('\n');
  }
  return hash.digest('hex').slice(0, 16);
}

/** What a63e38d's extractor gave on each set below, and how many inputs each holds. */
const RECORDED = {
  fixtures: { inputs: 93, digest: '74b3f83c9f838aa8' },
  shared: { inputs: 8_983, digest: '4f286018aa06b70a' },
  edges: { inputs: 15, digest: '346cd64ae510d7f1' },
  random: { inputs: 3_000, digest: '92298e7c5ebda768' },
};

const shared = resolve(repoRoot, '../shared/data/transcripts');
const sharedPresent = existsSync(shared);
if (!sharedPresent) console.info(`recorded facts over ../shared skipped: ${shared} is absent`);

describe('fact extraction against the recorded facts', () => {
  it('gives the recorded facts for every text of the fixtures’ transcripts', () => {
    const inputs = inputsOf(fixtures);
    expect(inputs.length).toBe(RECORDED.fixtures.inputs);
    expect(factsDigest(inputs)).toBe(RECORDED.fixtures.digest);
  });

  it.skipIf(!sharedPresent)('gives the recorded facts for every text of ../shared’s transcripts', () => {
    const inputs = inputsOf(shared);
    expect(new Set(inputs.map((i) => i.role))).toEqual(new Set(['user', 'assistant', 'tool_call', 'tool_result', 'system', 'summary']));
    expect(inputs.length).toBe(RECORDED.shared.inputs);
    expect(factsDigest(inputs)).toBe(RECORDED.shared.digest);
  }, 120_000);

  const TOOLS = ['Bash', 'Read', 'Edit', 'Write', 'Grep', 'WebFetch', 'mcp__x__browser_navigate', 'read_file', 'apply_patch', 'exec_command', null];
  const call = (toolName: string, command: string | null, path: string | null) => ({ turnId: 't', seq: 1, at: null, toolName, command, path });
  const result = (text: string, toolName: string, extra: Partial<TurnFactInput> = {}): TurnFactInput => ({
    role: 'tool_result',
    text,
    toolName,
    flags: [],
    isError: false,
    call: call(toolName, toolName === 'Bash' ? 'npm test' : null, toolName === 'Read' ? 'src/a.ts' : null),
    ...extra,
  });

  it('gives the recorded facts on edge cases: Windows paths, huge lines, replacement characters, CRLF, caps', () => {
    const lines = Array.from({ length: 3_000 }, (_, i) => `src/mod${i % 70}/file${i}.ts:${i + 1}:5: error TS2345: Argument of type 'X${i}' at C:\\Users\\me\\p${i}\\a.py`);
    const cases: TurnFactInput[] = [
      result('C:\\Users\\me\\project\\src\\main.py:12\r\nD:/data/x.csv\r\n\\\\server\\share\\f.txt and file1.txt\\nfile2.txt\r\n', 'Bash'),
      result(lines.join('\r\n'), 'Bash', { isError: true }),
      result(lines.join('\n'), 'Grep'),
      result(`${'a/b.ts '.repeat(200_000)}\nTypeError: x\n`, 'Bash'),
      result(`${'x'.repeat(3_000_000)} /etc/hosts https://example.com/a?b=1 ValueError`, 'Bash'),
      result(`caf\uFFFD/\uFFFD.ts \uFFFDError: bad \uD800 lone surrogate src/\uDC00x.ts v1.2.3 node@20.1.0`, 'Bash'),
      result(Array.from({ length: 400 }, (_, i) => `${i}\tfunction f${i}(a, b) {\n${i}\t  return g${i}(a) + h.k${i % 7}(b);\n${i}\t}`).join('\n'), 'Read'),
      result(Array.from({ length: 300 }, (_, i) => ` ✓ test number ${i} 3ms\n × failing ${i}\n--- FAIL: TestX${i}\nFAILED tests/t.py::test_${i}`).join('\n'), 'Bash'),
      result('Exit code 2\nnpm ERR! missing script\n--accent: #fff;\n--flag-name value\nAPI_KEY=sk-abcdefghijklmnopqrstuvwx1234 ./run.sh', 'Bash'),
      { role: 'user', text: 'fix `pool.map(x)` in src\\app\\main.ts:14 see #123 PROJ-4711 deadbeef1 and https://x.y/z, KEY=1 --dry-run 3 passed', toolName: null, flags: [], isError: false },
      { role: 'assistant', text: 'Edited `parseConfig` in C:/repo/a.ts\r\nand `Foo::bar` (node v20.11.1)', toolName: null, flags: [], isError: false },
      { role: 'tool_call', text: '', toolName: 'Bash', toolArgs: { command: 'cd C:\\repo && FOO=bar npm test -- src/a.test.ts', description: 'x' }, flags: [], isError: false },
      { role: 'tool_call', text: '', toolName: 'apply_patch', toolArgs: { input: '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-old\n+function neu(x) {\n+  return call(x)\n+}\n' }, flags: [], isError: false },
      { role: 'tool_call', text: '', toolName: 'Write', toolArgs: { file_path: 'config/app.toml', content: 'name = "x"\r\nversion = "1.2.3"\r\n[deps]\r\nfoo = "^2.0.1"\r\n' }, flags: [], isError: false },
      { role: 'system', text: 'Error: spawn ENOENT\r\nat /usr/lib/node.js:12\r\n 2 failed', toolName: null, flags: ['command-output'], isError: false },
    ];
    expect(cases.length).toBe(RECORDED.edges.inputs);
    expect(factsDigest(cases)).toBe(RECORDED.edges.digest);
  });

  it('gives the recorded facts on 3,000 seeded random mixtures of what every scanner looks for', () => {
    const fragment = fc.constantFrom(
      'src/a.ts', 'src/a.ts:12:3', '~/x.txt', 'a+b@c.d', 'src\\x\\', 'C:\\new\\file.txt', 'C:\\Users\\me\\x.py', 'C:/x/y.rs', '/etc/hosts', 'README.md', 'Makefile', 'a.b.c', 'done.', '...', '../up/x.js', './',
      'file1.txt\\nfile2.txt', '\\\\srv\\s\\f.txt', 'https://e.com/p?q=1.', 'git@github.com:o/r.git', 'user@example.com', 'v1.2.3', 'node@20.1.0', 'Python 3.11.4',
      'go1.21.5', 'requests==2.31.0', 'TypeError: x', 'error[E0308]: mismatched', 'error TS2345', 'FAIL src/x.test.ts', 'panic: oops', 'Traceback (most recent call last):',
      'npm ERR! code 1', 'not ok 3 - y', 'ok 2 - z', ' ✓ works 3ms', ' × breaks', '❯ src/f.test.ts', '--- FAIL: TestA', 'PASSED t.py::test_b', 'test a::b ... ok', 'Exit code 1',
      'function foo(a) {', 'def bar(x):', '  async method(a: T): R {', 'const f = (x) => x', 'class Baz', 'pool.map(x)', 'this.call(y)', 'self.run(z)', 'this.(x)', 'a.b.c.d.e.f(1)', 'if (x)', '`snake_case`', '`obj.method()`',
      '#123', 'PROJ-42', 'UTF-8', 'deadbeef12', '123e4567-e89b-12d3-a456-426614174000', 'FOO_BAR=baz', '--dry-run', '--accent: #fff;', 'key: value', '"k": 1,', '::error file=a.py::src/a.py:3:1',
      'a.ts(12,5)', 'x.py", line 4', 'sk-abcdefghijklmnopqrstuvwx1234', 'password: hunter2hunter2', '<private>s/e.cret</private>', '\uFFFD', '\r\n', '\n', '\t', ' ', '(', ')', '`', '```\n',
    );
    const text = fc.array(fragment, { minLength: 0, maxLength: 60 }).map((parts) => parts.join(''));
    const input = fc.record({
      role: fc.constantFrom('tool_result', 'user', 'assistant', 'system', 'tool_call'),
      text,
      toolName: fc.constantFrom(...TOOLS),
      command: fc.option(fc.constantFrom('npm test', 'cat src/a.ts', "sed -n '10,20p' src/b.py", 'nl -ba x.go | sed -n 5,9p', 'ls'), { nil: null }),
      path: fc.option(fc.constantFrom('src/a.ts', 'package.json', '.env', 'C:\\x\\y.toml'), { nil: null }),
      flags: fc.subarray(['bash', 'command-output', 'error', 'meta']),
      isError: fc.boolean(),
      sanitized: fc.boolean(),
    });
    const turns = fc.sample(input, { numRuns: RECORDED.random.inputs, seed: 15_1 }).map((i): TurnFactInput => {
      const tool = i.toolName ?? 'tool';
      return i.role === 'tool_call'
        ? { role: 'tool_call', text: i.text, toolName: i.toolName, toolArgs: { command: i.command ?? i.text, file_path: i.path, content: i.text, pattern: i.text }, flags: i.flags, isError: i.isError }
        : { role: i.role, text: i.text, toolName: i.toolName, flags: i.flags, isError: i.isError, sanitized: i.sanitized, call: i.role === 'tool_result' ? call(tool, i.command, i.path) : null };
    });
    expect(new Set(turns.map((t) => t.role)).size, 'every role drawn').toBe(5);
    expect(factsDigest(turns, false)).toBe(RECORDED.random.digest);
  });
});
