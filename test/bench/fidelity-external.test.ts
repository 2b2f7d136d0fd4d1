/**
 * The external fidelity set (issue #15: acceptance on sessions nobody tuned to):
 * scripts/fetch-external-sessions.mjs turns convx's exported sessions into Claude Code / Codex
 * transcripts with a manifest, and `cairn bench fidelity-external --data <folder>` measures them.
 * Everything here is a tiny synthetic fixture; the real sessions are never part of the repository.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bashCommands, splitAtCompactions, transcriptText } from '../../bench/src/fidelity.js';
import { codexSplits, codexText } from '../../bench/src/fidelity-codex.js';
import { fidelityExternalSuite, readExternalSet } from '../../bench/src/suites/fidelity-external.js';
import type { BenchContext } from '../../bench/src/types.js';

interface ConvxMessage {
  kind: string;
  role: string;
  text: string;
  timestamp: string;
}
interface ConvxSession {
  session_id: string;
  cwd: string;
  started_at: string;
  source_system: string;
  messages: ConvxMessage[];
  child_sessions?: ConvxSession[] | null;
}
interface Script {
  MANIFEST_SCHEMA: string;
  SOURCES: Array<{ package: string; version: string; sha256: string; licence: string; format: string; root: string }>;
  convxToClaude(session: ConvxSession, options?: { parentSessionId?: string }): string[];
  convxToCodex(session: ConvxSession): string[];
  convxSessions(root: string): Array<{ agent: string; rel: string; lines: string[]; session: string; parent: string | null }>;
  claudeJsonlSessions(root: string): Array<{ agent: string; rel: string; lines: string[]; text: string; session: string; parent: string | null; source: string }>;
  parsePythonLiteral(text: string): unknown;
}
const load = async (): Promise<Script> => (await import(join(process.cwd(), 'scripts', 'fetch-external-sessions.mjs'))) as Script;
interface SpecStory {
  specstoryToClaude(markdown: string, options: { sessionId: string; cwd: string; startedAt: string }): string[];
  specstorySessions(root: string, options: { package: string }): Array<{ agent: string; rel: string; lines: string[]; session: string; parent: string | null; source: string }>;
  startOf(fileName: string, markdown: string): string | null;
}
const loadSpecStory = async (): Promise<SpecStory> => (await import(join(process.cwd(), 'scripts', 'external-sessions-specstory.mjs'))) as SpecStory;

const work = mkdtempSync(join(tmpdir(), 'cairn-external-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const at = (i: number): string => new Date(Date.UTC(2026, 1, 24, 17, 0, i)).toISOString();
const msg = (kind: string, text: string, i: number): ConvxMessage => ({ kind, role: kind === 'tool' ? 'tool' : kind, text, timestamp: at(i) });

/** A convx-exported Claude Code session: reads and edits of a few files, then /compact, then more of the same. */
function claudeExport(steps: number, compactAt: number | null): ConvxSession {
  const messages: ConvxMessage[] = [];
  for (let i = 0; i < steps; i++) {
    const file = `/repo/src/mod${i % 6}.ts`;
    if (compactAt !== null && i === compactAt) {
      messages.push(msg('user', 'This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\n1. Work on /repo/src/mod1.ts', i));
      messages.push(msg('user', '<command-name>/compact</command-name>\n            <command-message>compact</command-message>', i));
      continue;
    }
    if (i % 4 === 0) messages.push(msg('user', `check ${file}:${i + 3} and the handler${i % 6}( call`, i));
    else if (i % 4 === 1) messages.push(msg('tool', `[tool_use] Read\n${JSON.stringify({ file_path: file }, null, 2)}`, i));
    else if (i % 4 === 2) messages.push(msg('tool', `     1→export function handler${i % 6}(req: Request): Response {\n     2→  return render${i % 6}(req);\n     3→}`, i));
    else messages.push(msg('assistant', `\`handler${(i - 3) % 6}(req)\` in ${`/repo/src/mod${(i - 3) % 6}.ts`} looks right; ran \`npm test -- --grep mod${(i - 3) % 6}\``, i));
  }
  return { session_id: 'aaaaaaaa-0000-4000-8000-000000000001', cwd: '/repo', started_at: at(0), source_system: 'claude', messages, child_sessions: null };
}

describe('scripts/fetch-external-sessions.mjs', () => {
  it('pins each source by version and sha256, with its licence', async () => {
    const { SOURCES, MANIFEST_SCHEMA } = await load();
    expect(MANIFEST_SCHEMA).toBe('cairn-external-sessions/1');
    for (const s of SOURCES) {
      expect(s.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(s.version).toMatch(/^\d+\.\d+/);
      expect(s.licence.length).toBeGreaterThan(0);
      expect(['convx-history', 'specstory-cursor', 'claude-code-jsonl']).toContain(s.format);
      if (s.format === 'specstory-cursor') expect(s.root).toMatch(/\/\.specstory\/history$/);
    }
  });

  it('writes an exported Claude Code session as Claude Code lines: calls linked to results, the compaction put back', async () => {
    const { convxToClaude } = await load();
    const lines = convxToClaude(claudeExport(60, 30)).map((l) => JSON.parse(l) as Record<string, any>);
    expect(lines.every((l) => l.sessionId === 'aaaaaaaa-0000-4000-8000-000000000001' && l.cwd === '/repo')).toBe(true);
    // Each line chains to the one before it.
    lines.slice(1).forEach((l, i) => expect(l.parentUuid).toBe(lines[i]?.uuid));
    const call = lines.find((l) => l.message?.content?.[0]?.type === 'tool_use');
    const result = lines[lines.indexOf(call!) + 1];
    expect(call?.message.content[0]).toMatchObject({ name: 'Read', input: { file_path: '/repo/src/mod1.ts' } });
    expect(result?.message.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: call?.message.content[0].id });
    const boundary = lines.findIndex((l) => l.subtype === 'compact_boundary');
    expect(lines[boundary]?.compactMetadata).toEqual({ trigger: 'manual' });
    expect(lines[boundary + 1]).toMatchObject({ type: 'user', isCompactSummary: true });
    // What the bench reads back: one real compaction with its summary.
    const splits = splitAtCompactions(lines.map((l) => JSON.stringify(l)));
    expect(splits).toHaveLength(1);
    expect(splits[0]?.summary).toContain('Work on /repo/src/mod1.ts');
    // Without the /compact command after it, the compaction was automatic.
    const auto = convxToClaude({ ...claudeExport(60, 30), messages: claudeExport(60, 30).messages.filter((m) => !m.text.startsWith('<command-name>')) });
    expect(auto.map((l) => JSON.parse(l) as { compactMetadata?: unknown }).find((l) => l.compactMetadata)?.compactMetadata).toEqual({ trigger: 'auto' });
  });

  it('reads back a tool result the export printed as a Python list, and leaves other text as it is', async () => {
    const { convxToClaude, parsePythonLiteral } = await load();
    expect(parsePythonLiteral("[{'type': 'text', 'text': 'a\\nb \\'q\\' \\u00e9'}]")).toEqual([{ type: 'text', text: "a\nb 'q' é" }]);
    expect(parsePythonLiteral('[{\'type\': "text", \'n\': 3, \'ok\': True, \'x\': None}]')).toEqual([{ type: 'text', n: 3, ok: true, x: null }]);
    expect(parsePythonLiteral("[{'type': 'text'")).toBeNull();
    const session = { ...claudeExport(0, null), messages: [msg('tool', '[tool_use] Task\n{"prompt": "explore"}', 0), msg('tool', "[{'type': 'text', 'text': 'Found src/a.ts:3\\nand more'}]", 1), msg('tool', '[tool_use] Bash\n{"command": "ls"}', 2), msg('tool', "[{'type': 'text' broken", 3)] };
    const lines = convxToClaude(session).map((l) => JSON.parse(l) as { message: { content: Array<{ content?: unknown }> } });
    expect(lines[1]?.message.content[0]?.content).toEqual([{ type: 'text', text: 'Found src/a.ts:3\nand more' }]);
    expect(lines[3]?.message.content[0]?.content).toBe("[{'type': 'text' broken");
  });

  it('writes an exported Codex session as rollout lines, each call with the id of the output that answers it', async () => {
    const { convxToCodex } = await load();
    const session: ConvxSession = {
      session_id: '019c0000-0000-7000-8000-000000000001',
      cwd: '/repo',
      started_at: at(0),
      source_system: 'codex',
      messages: [
        msg('system', '<permissions instructions>\nsandbox', 0),
        msg('user', 'why does src/sync.py:40 check for git?', 1),
        msg('tool', '[tool_call] exec_command\n{"cmd":"rg -n is_git src"}', 2),
        msg('tool', '[tool_result] call_id=call_A\nProcess exited with code 0\nOutput:\nsrc/sync.py:40:    if not is_git(path):', 3),
        msg('assistant', 'It is the guard in `is_git(` at src/sync.py:40.', 4),
      ],
    };
    const lines = convxToCodex(session);
    const parsed = lines.map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> });
    expect(parsed[0]).toMatchObject({ type: 'session_meta', payload: { id: session.session_id, cwd: '/repo' } });
    expect(parsed.find((p) => p.payload.type === 'function_call')?.payload).toMatchObject({ name: 'exec_command', call_id: 'call_A' });
    expect(parsed.find((p) => p.payload.type === 'function_call_output')?.payload).toMatchObject({ call_id: 'call_A' });
    const text = codexText(lines, true);
    expect(text).toContain('rg -n is_git src');
    expect(text).toContain('src/sync.py:40:    if not is_git(path):');
    expect(text).not.toContain('permissions instructions');
    expect(codexSplits(lines)).toEqual([]);
  });

  it('finds sessions and their subagents in an unpacked history folder', async () => {
    const { convxSessions } = await load();
    const root = join(work, 'history');
    const main = claudeExport(20, null);
    main.child_sessions = [{ ...claudeExport(8, null), session_id: 'a1b2c3', child_sessions: null }];
    mkdirSync(join(root, 'pascal', 'claude', '2026-02-24-1714-x'), { recursive: true });
    writeFileSync(join(root, 'pascal', 'claude', '2026-02-24-1714-x', '.index.json'), JSON.stringify(main));
    writeFileSync(join(root, 'pascal', 'claude', '2026-02-24-1714-x', 'index.md'), '# not read');
    const found = convxSessions(root);
    expect(found.map((f) => f.rel)).toEqual([`${main.session_id}.jsonl`, `${main.session_id}/subagents/agent-a1b2c3.jsonl`]);
    const child = JSON.parse(found[1]?.lines[0] ?? '{}') as { sessionId: string; agentId: string; isSidechain: boolean };
    expect(child).toMatchObject({ sessionId: main.session_id, agentId: 'a1b2c3', isSidechain: true });
  });
});

describe('Claude Code transcript files a package ships (claude-code-jsonl)', () => {
  const line = (fields: Record<string, unknown>): string => JSON.stringify({ parentUuid: null, isSidechain: false, userType: 'external', cwd: '/Users/dev/app', version: '1.0.17', ...fields });

  it('keeps every transcript byte for byte, with its session, and its subagents under their parent', async () => {
    const { claudeJsonlSessions } = await load();
    const root = join(work, 'mock-data');
    const project = join(root, '-Users-dev-app');
    mkdirSync(join(project, 's-1', 'subagents'), { recursive: true });
    const main = `${[
      JSON.stringify({ type: 'summary', summary: 'A title', leafUuid: 'u2' }),
      line({ sessionId: 's-1', type: 'user', message: { role: 'user', content: 'fix src/app.py' }, uuid: 'u1', timestamp: '2025-06-08T11:00:11.669Z' }),
      line({ sessionId: 's-1', type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'done' }] }, uuid: 'u2', timestamp: '2025-06-08T11:00:12.000Z' }),
    ].join('\n')}\n\n`;
    writeFileSync(join(project, 's-1.jsonl'), main);
    writeFileSync(join(project, 's-1', 'subagents', 'agent-a1.jsonl'), `${line({ sessionId: 's-1', isSidechain: true, type: 'user', message: { role: 'user', content: 'look' }, uuid: 'x1' })}\n`);
    writeFileSync(join(root, 'pricing.json'), '{}');
    writeFileSync(join(project, 'notes.md'), '# not a transcript');
    const found = claudeJsonlSessions(root);
    expect(found.map((f) => f.rel)).toEqual(['-Users-dev-app/s-1/subagents/agent-a1.jsonl', '-Users-dev-app/s-1.jsonl']);
    expect(found[1]).toMatchObject({ agent: 'claude-code', session: 's-1', parent: null, source: '-Users-dev-app/s-1.jsonl' });
    expect(found[0]).toMatchObject({ session: 'agent-a1', parent: 's-1' });
    // Unchanged, blank trailing line included; the lines the manifest counts are the non-blank ones.
    expect(found[1]?.text).toBe(main);
    expect(found[1]?.lines).toHaveLength(3);
  });

  it('refuses a file that is not JSON lines, naming it', async () => {
    const { claudeJsonlSessions } = await load();
    const root = join(work, 'mock-bad');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'broken.jsonl'), `${line({ sessionId: 's', type: 'user' })}\nnot json\n`);
    expect(() => claudeJsonlSessions(root)).toThrow(/broken\.jsonl holds a line that is not JSON/);
  });
});

/** A SpecStory export of a Cursor chat, in the layout SpecStory wrote in early 2025. */
const SPECSTORY = [
  '## SpecStory',
  '',
  '## Fixing the parser (27/02/2025, 17:02:54)',
  '',
  '_**User**_',
  '',
  'Read @TODO.md and fix `parse_args(` in src/app/cli.py',
  '',
  '---',
  '',
  '_**Assistant**_',
  '',
  '<think>The user wants parse_args fixed.',
  'Check src/app/cli.py first.</think>I will look at the CLI first.',
  '',
  '---',
  '',
  '_****_',
  '',
  'Read file: src/app/cli.py',
  '',
  '---',
  '',
  '_****_',
  '',
  '<details>',
  '            <summary>Grep search for "parse_args" • **2** files</summary>',
  '        ',
  '| File | Line | Match |',
  '|------|------|-------|',
  '| `src/app/cli.py` | L12 | `def parse_args(argv):` |',
  '',
  '</details>',
  '',
  '---',
  '',
  '_****_',
  '',
  '```bash',
  'python -m pytest tests/test_cli.py -q',
  '```',
  '',
  '```',
  'FAILED tests/test_cli.py::test_empty - IndexError: list index out of range',
  '1 failed in 0.12s',
  '```',
  '',
  '---',
  '',
  '_****_',
  '',
  '```diff',
  '  def parse_args(argv):',
  '-     return argv[0]',
  '+     return argv[0] if argv else None',
  '```',
  '',
  '---',
  '',
  '_****_',
  '',
  'Fixed. You can check it yourself with:',
  '',
  '```bash',
  'pytest -q',
  '```',
  '',
  '---',
  '',
].join('\n');

describe('scripts/external-sessions-specstory.mjs', () => {
  const options = { sessionId: 'bbbbbbbb-0000-4000-8000-000000000002', cwd: '/repo/demo', startedAt: '2025-02-27T17:02:54.000Z' };

  it('writes a SpecStory chat as Claude Code lines: turns, thinking, and each tool call answered by its result', async () => {
    const { specstoryToClaude } = await loadSpecStory();
    const lines = specstoryToClaude(SPECSTORY, options).map((l) => JSON.parse(l) as Record<string, any>);
    expect(lines.every((l) => l.sessionId === options.sessionId && l.cwd === '/repo/demo' && l.isSidechain === false)).toBe(true);
    lines.slice(1).forEach((l, i) => expect(l.parentUuid).toBe(lines[i]?.uuid));
    expect(lines[0]?.timestamp).toBe('2025-02-27T17:02:54.000Z');
    expect(lines[1]?.timestamp).toBe('2025-02-27T17:02:55.000Z');
    const blocks = lines.map((l) => (typeof l.message.content === 'string' ? { type: 'user-text', text: l.message.content } : l.message.content[0]));
    expect(blocks.map((b) => (b.type === 'tool_use' ? `tool_use:${b.name}` : b.type))).toEqual([
      'user-text',
      'thinking',
      'text',
      'tool_use:Read',
      'tool_result',
      'tool_use:grep_search',
      'tool_result',
      'tool_use:Bash',
      'tool_result',
      'tool_use:Edit',
      'tool_result',
      'text',
    ]);
    expect(blocks[0].text).toBe('Read @TODO.md and fix `parse_args(` in src/app/cli.py');
    expect(blocks[1].thinking).toBe('The user wants parse_args fixed.\nCheck src/app/cli.py first.');
    expect(blocks[2].text).toBe('I will look at the CLI first.');
    expect(blocks[3].input).toEqual({ file_path: 'src/app/cli.py' });
    expect(blocks[4]).toMatchObject({ tool_use_id: blocks[3].id, content: '' });
    expect(blocks[5].input).toEqual({ query: 'Grep search for "parse_args"' });
    expect(blocks[6].content).toContain('| `src/app/cli.py` | L12 | `def parse_args(argv):` |');
    expect(blocks[7].input).toEqual({ command: 'python -m pytest tests/test_cli.py -q' });
    expect(blocks[8]).toMatchObject({ tool_use_id: blocks[7].id, content: 'FAILED tests/test_cli.py::test_empty - IndexError: list index out of range\n1 failed in 0.12s' });
    // The applied diff as Claude Code's Edit: context and removed lines before, context and added after.
    expect(blocks[9].input).toEqual({ old_string: 'def parse_args(argv):\n    return argv[0]', new_string: 'def parse_args(argv):\n    return argv[0] if argv else None' });
    // A shell block inside prose is the assistant's advice, not a call.
    expect(blocks[11].text).toBe('Fixed. You can check it yourself with:\n\n```bash\npytest -q\n```');
    // What the bench reads back: the command, its output, the search result.
    const jsonl = specstoryToClaude(SPECSTORY, options);
    expect(bashCommands(jsonl)).toEqual(['python -m pytest tests/test_cli.py -q']);
    expect(transcriptText(jsonl, true)).toContain('IndexError: list index out of range');
  });

  it('reads the later layout too: steps between bare `---` lines, the thought in a details block, a `---` inside output kept', async () => {
    const { specstoryToClaude } = await loadSpecStory();
    const later = [
      '<!-- Generated by SpecStory -->',
      '',
      '# Unexpected keyword argument (2025-05-25 13:24:00)',
      '',
      '_**User**_',
      '',
      "ERROR | DTWAligner.__init__() got an unexpected keyword argument 'window'",
      '',
      '---',
      '',
      '_**Assistant**_',
      '',
      '<think><details><summary>Thought Process</summary>The constructor takes window_size.</details></think>',
      '',
      '---',
      '',
      'Let me find the callers.',
      '',
      '---',
      '',
      '```bash',
      'rg -n "DTWAligner(" src',
      '```',
      '',
      '```',
      'src/core/align.py:106:    dtw = DTWAligner(window=w)',
      '---',
      'src/core/multi.py:121:    dtw = DTWAligner(window=size)',
      '```',
      '',
      '---',
      '',
      'Read file: src/core/dtw_aligner.py',
      '',
      '---',
    ].join('\n');
    const blocks = specstoryToClaude(later, options).map((l) => (JSON.parse(l) as Record<string, any>).message.content);
    expect(blocks[0]).toBe("ERROR | DTWAligner.__init__() got an unexpected keyword argument 'window'");
    expect(blocks[1][0]).toEqual({ type: 'thinking', thinking: 'The constructor takes window_size.' });
    expect(blocks[2][0]).toEqual({ type: 'text', text: 'Let me find the callers.' });
    expect(blocks[3][0]).toMatchObject({ type: 'tool_use', name: 'Bash', input: { command: 'rg -n "DTWAligner(" src' } });
    expect(blocks[4][0].content).toBe('src/core/align.py:106:    dtw = DTWAligner(window=w)\n---\nsrc/core/multi.py:121:    dtw = DTWAligner(window=size)');
    expect(blocks[5][0]).toMatchObject({ type: 'tool_use', name: 'Read', input: { file_path: 'src/core/dtw_aligner.py' } });
    expect(blocks).toHaveLength(7);
    // In the early layout `_****_` is a break even after a fence the export left open.
    const open = ['_**User**_', 'go', '_**Assistant**_', 'Output:', '```', 'a stray fence', '', '---', '', '_****_', '', '```bash', 'make', '```'].join('\n');
    const calls = specstoryToClaude(open, options).map((l) => (JSON.parse(l) as Record<string, any>).message.content[0]);
    expect(calls.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'Bash', input: { command: 'make' } });
  });

  it('keeps what a cut-off export holds: an unclosed fence, details block or thought ends the step, nothing is lost or thrown', async () => {
    const { specstoryToClaude } = await loadSpecStory();
    const cut = ['_**User**_', 'go', '_**Assistant**_', '<think>half a thought', 'still thinking'].join('\n');
    const thought = specstoryToClaude(cut, options).map((l) => JSON.parse(l) as Record<string, any>);
    expect(thought[1]?.message.content[0]).toEqual({ type: 'thinking', thinking: 'half a thought\nstill thinking' });
    const fence = ['_**User**_', 'go', '_**Assistant**_', '```bash', 'make test', '```', '', '```', 'half the output'].join('\n');
    const run = specstoryToClaude(fence, options).map((l) => JSON.parse(l) as Record<string, any>);
    expect(run[1]?.message.content[0].input).toEqual({ command: 'make test' });
    expect(run[2]?.message.content[0].content).toBe('half the output');
    const details = ['_**User**_', 'go', '_**Assistant**_', '<details>', '<summary>Searched codebase "x" • **1** results</summary>', '| `a.py` |'].join('\n');
    const search = specstoryToClaude(details, options).map((l) => JSON.parse(l) as Record<string, any>);
    expect(search[1]?.message.content[0]).toMatchObject({ name: 'codebase_search', input: { query: 'Searched codebase "x"' } });
    expect(search[2]?.message.content[0].content).toBe('| `a.py` |');
    expect(specstoryToClaude('', options)).toEqual([]);
    expect(specstoryToClaude('# notes\n\nno turns here\n', options)).toEqual([]);
    expect(specstoryToClaude('_**User**_\r\n\r\nwindows line ends\r\n', options).map((l) => (JSON.parse(l) as Record<string, any>).message.content)).toEqual(['windows line ends']);
  });

  it('dates a chat by its title, else its file name, and lists a history folder without the explanation file', async () => {
    const { startOf, specstorySessions } = await loadSpecStory();
    expect(startOf('fixing-the-parser.md', SPECSTORY)).toBe('2025-02-27T17:02:54.000Z');
    expect(startOf('2025-03-04_05-38-untitled.md', '_**User**_\nhi')).toBe('2025-03-04T05:38:00.000Z');
    expect(startOf('notes.md', '_**User**_\nhi')).toBeNull();
    const root = join(work, 'specstory-history');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, '.what-is-this.md'), '# SpecStory Artifacts Directory\n_**User**_\nnot a chat');
    writeFileSync(join(root, 'fixing-the-parser.md'), SPECSTORY);
    writeFileSync(join(root, '2025-03-04_05-38-untitled.md'), '_**User**_\n\nhello\n');
    writeFileSync(join(root, 'undated.md'), '_**User**_\n\nhello\n');
    writeFileSync(join(root, 'history.txt'), '_**User**_\n\nhello\n');
    writeFileSync(join(root, '2025-03-05_10-00-empty.md'), '## SpecStory\n');
    const found = specstorySessions(root, { package: 'demo' });
    expect(found.map((f) => f.source)).toEqual(['2025-03-04_05-38-untitled.md', 'fixing-the-parser.md']);
    expect(found.every((f) => f.agent === 'claude-code' && f.parent === null && f.rel === `${f.session}.jsonl`)).toBe(true);
    expect((JSON.parse(found[1]?.lines[0] ?? '{}') as { cwd: string }).cwd).toBe('/repo/demo');
    // The same export gets the same session id on every run (the manifest's hashes stay put).
    expect(specstorySessions(root, { package: 'demo' }).map((f) => f.session)).toEqual(found.map((f) => f.session));
  });
});

/** An external-set folder: transcripts and a manifest, as the script writes them. */
async function externalSet(dir: string, sessions: ConvxSession[], packageOf: (i: number) => string = () => 'synthetic', originOf: (i: number) => string | undefined = () => undefined): Promise<void> {
  const { convxToClaude, MANIFEST_SCHEMA } = await load();
  const listed = sessions.map((s, i) => {
    const name = packageOf(i);
    const rel = `claude-code/${name}-0.0.1/${s.session_id}.jsonl`;
    const text = `${convxToClaude(s).join('\n')}\n`;
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
    const origin = originOf(i);
    return { agent: 'claude-code', ...(origin ? { origin } : {}), package: name, version: '0.0.1', licence: 'MIT', path: rel, sha256: createHash('sha256').update(text).digest('hex'), turns: 0, compactions: 0 };
  });
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ schema: MANIFEST_SCHEMA, sessions: listed }));
}

const context = (dataDir: string): BenchContext => ({ quick: true, seed: 42, sizes: [], dataDir, cacheDir: join(work, 'cache'), log: () => {} });

describe('cairn bench fidelity-external', () => {
  it('says how to get the set when the folder has no manifest', async () => {
    const outcome = await fidelityExternalSuite.run(context(join(work, 'nothing')));
    expect(outcome.status).toBe('skipped');
    expect(outcome.status === 'skipped' && outcome.reason).toMatch(/fetch-external-sessions\.mjs/);
  });

  it('refuses a manifest that is not one, a transcript that changed, and a path out of the folder, in one line', async () => {
    const dir = join(work, 'bad');
    await externalSet(dir, [claudeExport(60, null)]);
    expect(() => readExternalSet(dir)).not.toThrow();
    const error = (): string => {
      try {
        readExternalSet(dir);
      } catch (e) {
        return e instanceof Error ? e.message : String(e);
      }
      return 'no error';
    };
    const file = join(dir, 'claude-code', 'synthetic-0.0.1', 'aaaaaaaa-0000-4000-8000-000000000001.jsonl');
    writeFileSync(file, '{"type":"user"}\n');
    const messages = [error()];
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ schema: 'cairn-external-sessions/1', sessions: [{ agent: 'claude-code', path: '../../etc/passwd', sha256: 'x' }] }));
    messages.push(error());
    writeFileSync(join(dir, 'manifest.json'), '{"schema":"other"}');
    messages.push(error());
    writeFileSync(join(dir, 'manifest.json'), 'not json');
    messages.push(error());
    expect(messages[0]).toMatch(/aaaaaaaa-0000-4000-8000-000000000001\.jsonl does not match its sha256 in the manifest/);
    expect(messages[1]).toMatch(/leaves the folder/);
    expect(messages[2]).toMatch(/is not an external-session manifest/);
    expect(messages[3]).toMatch(/is not JSON/);
    for (const m of messages) expect(m).not.toContain('\n');
  });

  it('measures a real compaction and the cut points, every row labelled external, summary rows only with a summary', async () => {
    const dir = join(work, 'set');
    await externalSet(dir, [claudeExport(160, 100)]);
    const outcome = await fidelityExternalSuite.run(context(dir));
    expect(outcome.status).toBe('ok');
    if (outcome.status !== 'ok') return;
    const names = outcome.metrics.map((m) => m.name);
    expect(names.every((n) => n.startsWith('external'))).toBe(true);
    expect(names).toContain('external: Claude Code summary');
    expect(names).toContain("external: cairn at the summary's token count");
    expect(names).toContain('external: cairn @4K (all cuts)');
    const summary = outcome.metrics.find((m) => m.name === 'external: Claude Code summary');
    expect(summary?.note).toMatch(/^1 real compactions, \d+ needed details$/);
    const hook = outcome.metrics.find((m) => m.name === "external: cairn's post-compact hook alone (all cuts)");
    expect(hook?.value).toBeGreaterThan(0);
    expect(outcome.datasets[0]?.name).toMatch(/^synthetic 0\.0\.1 \(MIT\): 1 Claude Code transcripts \(1 real compactions, \d+ cut points measured\)/);

    // Without a compaction: cut points only, and no row compares with a summary.
    const plain = join(work, 'plain');
    await externalSet(plain, [claudeExport(160, null)]);
    const cutsOnly = await fidelityExternalSuite.run(context(plain));
    expect(cutsOnly.status).toBe('ok');
    if (cutsOnly.status !== 'ok') return;
    expect(cutsOnly.metrics.some((m) => m.name.includes('summary'))).toBe(false);
    expect(cutsOnly.metrics.map((m) => m.name)).toContain('external: cairn @2K (all cuts)');
    // One package: the pooled rows are its rows, none per package.
    expect(cutsOnly.metrics.some((m) => m.name.startsWith('external synthetic'))).toBe(false);
  });

  it('reports each package (repository) on its own beside the pooled rows when the set holds several', async () => {
    const dir = join(work, 'two-packages');
    const second = { ...claudeExport(160, null), session_id: 'cccccccc-0000-4000-8000-000000000003' };
    await externalSet(dir, [claudeExport(160, null), second], (i) => (i === 0 ? 'alpha' : 'beta'));
    const outcome = await fidelityExternalSuite.run(context(dir));
    expect(outcome.status).toBe('ok');
    if (outcome.status !== 'ok') return;
    const row = (name: string) => outcome.metrics.find((m) => m.name === name);
    const pooledHook = row("external: cairn's post-compact hook alone (all cuts)");
    const alpha = row("external alpha: cairn's post-compact hook alone (all cuts)");
    const beta = row("external beta: cairn's post-compact hook alone (all cuts)");
    expect(alpha?.note).toMatch(/^3 cuts \(0 real\), \d+ needed details/);
    expect(beta?.note).toMatch(/^3 cuts \(0 real\), \d+ needed details/);
    expect(pooledHook?.note).toMatch(/^6 cuts \(0 real\)/);
    expect(row('external alpha: cairn / recency cut @4K (all cuts)')?.note).toMatch(/^recency cut [01]\.\d{3}$/);
    expect(outcome.datasets.map((d) => d.name.split(' ')[0])).toEqual(['alpha', 'beta']);
    // No session says another agent ran it: no rows by origin.
    expect(outcome.metrics.some((m) => m.name.includes(' sessions: '))).toBe(false);

    // A Cursor chat written as a Claude Code transcript is pooled with its own kind too.
    const mixed = join(work, 'two-origins');
    await externalSet(mixed, [claudeExport(160, null), second], (i) => (i === 0 ? 'alpha' : 'beta'), (i) => (i === 0 ? undefined : 'cursor'));
    const byOrigin = await fidelityExternalSuite.run(context(mixed));
    expect(byOrigin.status).toBe('ok');
    if (byOrigin.status !== 'ok') return;
    const names = byOrigin.metrics.map((m) => m.name);
    expect(byOrigin.metrics.find((m) => m.name === "external, cursor sessions: cairn's post-compact hook alone (all cuts)")?.note).toMatch(/^3 cuts \(0 real\)/);
    expect(byOrigin.metrics.find((m) => m.name === "external, claude-code sessions: cairn's post-compact hook alone (all cuts)")?.note).toMatch(/^3 cuts \(0 real\)/);
    expect(names).toContain('external, cursor sessions: missed at the default budget, never captured');
  });
});

interface Scan {
  MARKERS: Array<[string, RegExp]>;
  scanArchive(file: string): { members: number; rows: Array<Record<string, string | number>> };
}
const loadScan = async (): Promise<Scan> => (await import(join(process.cwd(), 'scripts', 'scan-archives.mjs'))) as Scan;

describe('scripts/scan-archives.mjs (the fourth search: markers of real sessions inside package archives)', () => {
  const tree = join(work, 'scan-tree');
  const deep = `pkg-1.0/tests/fixtures/${'very-long-folder-name-'.repeat(5)}/session.jsonl`;
  const claudeLines = [
    JSON.stringify({ type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'fix src/a.ts' } }),
    JSON.stringify({ type: 'system', subtype: 'compact_boundary', uuid: 's1', parentUuid: null, logicalParentUuid: 'u1' }),
    JSON.stringify({ type: 'user', isCompactSummary: true, uuid: 'u2', parentUuid: 's1', message: { role: 'user', content: 'This session is being continued from a previous conversation' } }),
  ].join('\n');
  const write = (rel: string, text: string | Uint8Array): void => {
    mkdirSync(dirname(join(tree, rel)), { recursive: true });
    writeFileSync(join(tree, rel), text);
  };

  it('counts the markers in every member, long names and a nested zip included, and lists .jsonl members without markers', async () => {
    const { scanArchive } = await loadScan();
    const { zipSync, strToU8 } = await import('fflate');
    write(deep, claudeLines);
    write('pkg-1.0/README.md', 'a viewer for sessions\n');
    write('pkg-1.0/tests/empty.jsonl', '{"a":1}\n');
    write('pkg-1.0/vendor/rollouts.zip', zipSync({ 'rollout-2026-03-01T10-00-00-x.jsonl': strToU8('{"type":"session_meta"}\n{"type":"compacted","payload":{}}\n') }));
    const { execFileSync } = await import('node:child_process');
    for (const format of ['gnu', 'posix']) {
      const archive = join(work, `pkg-${format}.tar.gz`);
      execFileSync('tar', [`--format=${format}`, '-czf', archive, '-C', tree, 'pkg-1.0']);
      const { members, rows } = scanArchive(archive);
      expect(members).toBe(4);
      const byName = new Map(rows.map((r) => [r.member, r]));
      expect([...byName.keys()].sort()).toEqual([deep, 'pkg-1.0/tests/empty.jsonl', 'pkg-1.0/vendor/rollouts.zip!rollout-2026-03-01T10-00-00-x.jsonl'].sort());
      expect(byName.get(deep)).toMatchObject({ lines: 3, compact_boundary: 1, isCompactSummary: 1, parentUuid: 3, continued: 1, codex_compacted: 0 });
      expect(byName.get('pkg-1.0/vendor/rollouts.zip!rollout-2026-03-01T10-00-00-x.jsonl')).toMatchObject({ codex_compacted: 1, lines: 2 });
      expect(byName.get('pkg-1.0/tests/empty.jsonl')).toMatchObject({ compact_boundary: 0, parentUuid: 0, lines: 1 });
    }
  });

  it('a file that is not an archive fails with an error, not a silent empty scan', async () => {
    const { scanArchive } = await loadScan();
    const bogus = join(work, 'not-an-archive.tar.gz');
    writeFileSync(bogus, 'plain text, not gzip');
    expect(() => scanArchive(bogus)).toThrow();
  });
});
