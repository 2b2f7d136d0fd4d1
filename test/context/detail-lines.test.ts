/**
 * Issue #15 item 2: one line per detail, in the section its kind belongs to, saying why it matters.
 * Flags and CSS custom properties are not files, a library's dotted name is not a file, a "path"
 * holding an escape written out (`file1.txt\nfile2.txt`) is never rendered, and a detail whose only
 * reason is where it was seen is listed under a heading that says so.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { activityOf, callDetails, factDetails, garbledPath } from '../../src/context/details.js';
import { packDetails } from '../../src/context/session-context.js';
import type { FactSource, SessionFact, TurnRecord } from '../../src/types.js';
import { tempDirs } from '../helpers/cli.js';
import { hookInProcess } from '../hooks/in-process.js';
import { TranscriptWriter } from '../hooks/transcript.js';

function source(seq: number, role: FactSource['role'], toolName: string | null): FactSource {
  return { turnId: `s:${seq}`, seq, role, toolName, at: null, note: null };
}
function fact(kind: SessionFact['kind'], text: string, at: FactSource, extra: Partial<SessionFact> = {}): SessionFact {
  return { id: `${kind}:${text}`, sessionId: 's', kind, text, path: kind === 'path' ? text : null, line: null, note: null, occurrences: 1, first: at, last: at, byUser: false, ...extra };
}
function turn(seq: number, role: TurnRecord['role'], text: string, extra: Partial<TurnRecord> = {}): TurnRecord {
  return { id: `s:${seq}`, sessionId: 's', seq, role, text, toolName: null, toolInput: null, toolUseId: null, isError: false, flags: [], at: null, sourceUuid: null, sourceLine: seq, ...extra };
}

const SEEN = 'Seen only in output, files read and replies';

/** The lines of each section: `{ Files: [...], 'Other details': [...] }`. */
function sections(text: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  let current = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('## ')) out[(current = line.slice(3))] = [];
    else if (line.startsWith('- ')) out[current]?.push(line);
  }
  return out;
}

/**
 * Whether a detail line says why it matters: after ` — ` (edited, read, exit 1, in an error, in
 * edits …), as a definition's location (`… at path:line`), as a memory (its id), or by its section.
 */
function hasReason(line: string, section: string): boolean {
  if (section === SEEN) return true;
  if (/ \[[0-9A-Z]{26}\]$/.test(line)) return true;
  const why = / — (?!`)([^`]+)$/.exec(line)?.[1] ?? / — `[^`]*`$/.exec(line)?.[0];
  if (why && !/^\d+×$/.test(why)) return true;
  // Calls share a line that starts with why (`- called in edits to \`x.ex\`: …`, `- calls seen in output: …`).
  if (/^- (?:called (?:in|at) |calls seen in )[^`]*(?:`[^`]+`)?: `/.test(line)) return true;
  return /` at [^ ]+$/.test(line) || /^- (?:ran|error|test) `/.test(line);
}

describe('garbledPath', () => {
  it('rejects control characters and escapes written out after a file name or among slashes; keeps Windows folders', () => {
    expect(garbledPath('file1.txt\\nfile2.txt')).toBe(true);
    expect(garbledPath('src/a.ts\\tb')).toBe(true);
    expect(garbledPath('src/a\u0007.ts')).toBe(true);
    expect(garbledPath('src/a.ts\nsrc/b.ts')).toBe(true);
    expect(garbledPath('C:\\new\\tools\\run.ps1')).toBe(false);
    expect(garbledPath('src/new_file.ts')).toBe(false);
  });
});

describe('post-compact detail lines', () => {
  const turns = [
    turn(1, 'user', 'style the panel'),
    turn(2, 'tool_call', 'Read', { toolName: 'Read', toolInput: JSON.stringify({ file_path: '/repo/assets/css/app.css' }) }),
    turn(3, 'tool_result', ':root { --accent-amber: #f5a623; } Math.min(a, b)', { toolName: 'Read' }),
    turn(4, 'tool_call', 'Bash', { toolName: 'Bash', toolInput: JSON.stringify({ command: 'cat AGENTS.md' }) }),
    turn(5, 'tool_result', '** (CompileError) lib/app.ex:12: undefined function foo/0', { toolName: 'Bash', isError: true }),
    turn(6, 'assistant', 'I will wire `xterm.js` with Terminal.open(el).'),
  ];
  const command = source(4, 'tool_call', 'Bash');
  const read = source(3, 'tool_result', 'Read');
  const facts = [
    fact('path', '/repo/assets/css/app.css', source(2, 'tool_call', 'Read')),
    fact('path', 'assets/js/app.js', command),
    fact('path', 'AGENTS.md', command),
    fact('path', 'app.js', command),
    fact('path', 'xterm.js', command),
    fact('config', '--help', command),
    fact('path', 'lib/app.ex:12', source(5, 'tool_result', 'Bash'), { path: 'lib/app.ex', line: 12 }),
    fact('config', '--accent-amber', read, { occurrences: 6 }),
    fact('path', '/tmp/foo.ex', read),
    fact('path', 'DateTime.diff', read),
    fact('path', 'file1.txt\\nfile2.txt', read),
  ];
  const pack = () => {
    const activity = activityOf(turns);
    const details = [...factDetails(facts, activity, '/repo', (name) => name === 'AGENTS.md'), ...callDetails(activity, new Set())];
    return packDetails(details, { budget: 4000, ranker: 'composite', seed: 1, endSeq: 6 });
  };

  it('lists flags and dotted library names under other details, files (existing, or named by a path of the session) under files', () => {
    const by = sections(pack().text);
    const files = (by.Files ?? []).join('\n');
    const other = (by['Other details'] ?? []).join('\n');
    for (const name of ['/repo/assets/css/app.css', '`AGENTS.md`', '`app.js`', 'assets/js/app.js', 'lib/app.ex:12']) expect(files).toContain(name);
    for (const name of ['--help', 'xterm.js']) {
      expect(files).not.toContain(name);
      expect(other).toContain(name);
    }
    expect(pack().text).not.toContain('file1.txt');
  });

  it('gives each line its reason from the fact: read, in a command, in an error; where a call was seen', () => {
    const lines = pack().chosen.map((c) => c.line);
    expect(lines).toContain('- `/repo/assets/css/app.css` — read');
    expect(lines).toContain('- `AGENTS.md` — in a command');
    expect(lines).toContain('- `lib/app.ex:12` — in an error');
    expect(lines).toContain('- `Terminal.open(` — in a reply');
    expect(lines).toContain('- `Math.min(` — in code read');
    expect(lines.some((l) => l.includes('used this session'))).toBe(false);
  });

  it('lists what was only seen in a file read or output under a heading that says so, not as files', () => {
    const by = sections(pack().text);
    const seen = (by[SEEN] ?? []).join('\n');
    for (const name of ['--accent-amber', '/tmp/foo.ex', 'DateTime.diff']) expect(seen).toContain(name);
    for (const [section, lines] of Object.entries(by)) for (const line of lines) expect(hasReason(line, section), `${section}: ${line}`).toBe(true);
  });

  it('does not take a bare name for a file without the workspace saying so', () => {
    const details = factDetails(facts, activityOf(turns), '/repo');
    expect(details.find((d) => d.key === 'path:AGENTS.md')?.notFile).toBe(true);
    expect(details.find((d) => d.key === 'path:app.js')?.notFile).toBeUndefined();
  });
});

const dir = tempDirs();

async function hook(event: string, input: Record<string, unknown>, home: string, cwd: string): Promise<string> {
  const { code, out } = await hookInProcess(event, input, home, cwd);
  expect(code).toBe(0);
  return out;
}

describe('the context after /compact on a session with noisy facts', () => {
  it('lists no flag, library name, garbled path or reasonless line under files', async () => {
    const home = dir('cairn-lines-home-');
    const repo = dir('cairn-lines-repo-');
    mkdirSync(join(repo, '.git'));
    writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(repo, 'AGENTS.md'), '# agents\n');
    const session = 'a1b2c3d4-0000-4000-8000-00000000c0de';
    const transcript = join(dir('cairn-lines-claude-'), `${session}.jsonl`);
    const css = ':root {\n  --accent-amber: #f5a623;\n  --text-secondary: #999;\n}\n.panel { color: var(--accent-amber); }\n';
    const fixture = 'test "splits" do\n  assert split("file1.txt\\nfile2.txt") == ["/tmp/foo.ex", "/other/path/foo.ex"]\n  assert home() == "/home/user"\nend\n';
    const trace = Array.from({ length: 8 }, (_, i) => `    (jason 1.4.1) lib/decoder.ex:${264 + i * 40}: Jason.Decoder.parse/2`).join('\n');
    const w = new TranscriptWriter(session, repo)
      .user('Give the transcript panel amber accents in assets/css/app.css; see AGENTS.md')
      .tool('Read', { file_path: join(repo, 'assets/css/app.css') }, css)
      .tool('Read', { file_path: join(repo, 'test/split_test.exs') }, fixture)
      .tool('Bash', { command: 'mix run priv/load.exs' }, `** (Jason.DecodeError) unexpected byte\n${trace}\n    (elixir 1.18.0) lib/enum.ex:961: Enum.map/2`)
      .assistant('xterm.js and Highlight.js already handle this; DateTime.diff is not needed. Next I edit app.css.')
      .tool('Edit', { file_path: join(repo, 'assets/css/app.css'), old_string: '--accent-amber: #f5a623;', new_string: '--accent-amber: #ffb000;' }, 'The file has been updated.')
      .tool('Bash', { command: 'mix test test/split_test.exs' }, '1 test, 1 failure', true);
    writeFileSync(transcript, w.text());
    const input = { session_id: session, cwd: repo, transcript_path: transcript };
    // PreCompact's list (in another home: what it lists, SessionStart leaves to the summary).
    const pre = await hook('pre-compact', { ...input, hook_event_name: 'PreCompact', trigger: 'manual' }, dir('cairn-lines-pre-'), repo);
    expect(pre).toContain('assets/css/app.css');
    // The string literal's two names are read as two paths (ingest splits a written-out `\n`), never glued.
    expect(pre).not.toContain('file1.txt\\n');
    writeFileSync(transcript, w.compact('The user asked for amber accents in the transcript panel.').text());
    const out = await hook('session-start', { ...input, hook_event_name: 'SessionStart', source: 'compact' }, home, repo);
    const context = (JSON.parse(out) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext;
    const by = sections(context);
    const files = (by.Files ?? []).join('\n');
    expect(files).toContain('assets/css/app.css');
    expect(files).toContain('`AGENTS.md`');
    for (const noise of ['--accent-amber', '--text-secondary', 'xterm.js', 'Highlight.js', 'DateTime.diff', '/tmp/foo.ex', 'file1.txt', '/home/user', '/other/path/foo.ex', 'lib/decoder.ex']) expect(files, noise).not.toContain(noise);
    expect(context).not.toContain('file1.txt\\n');
    for (const [section, lines] of Object.entries(by)) for (const line of lines) expect(hasReason(line, section), `${section}: ${line}`).toBe(true);
  });
});
