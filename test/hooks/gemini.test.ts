import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findCompression, readGivenContext, withoutRepeats, writeGivenContext } from '../../src/hooks/gemini.js';
import { readTranscript } from '../../src/ingest/index.js';
import { hookInProcess } from './in-process.js';

// Gemini CLI fires no SessionStart after compressing its history: cairn's `before-model` hook
// (Gemini's BeforeModel, before every model call) adds the post-compact context to the message
// holding the `<state_snapshot>`. The transcript is the one Gemini CLI 0.61.0 wrote in
// test/e2e/gemini-compress.test.ts's scenario (fixtures/gemini-cli-0.61.0-compress).

const FIXTURE = join(import.meta.dirname, 'fixtures', 'gemini-cli-0.61.0-compress', 'session.jsonl');
const SESSION = 'ba108b8a-4bf7-47bb-bdc2-efd6be583942';
const SOURCE = ['// retry policy', ...Array.from({ length: 38 }, (_, i) => `// line ${i + 2}`), 'export function backoffDelay(attempt: number, baseMs = 250): number {', '  return Math.min(baseMs * 2 ** attempt, 8_000);', '}', ''].join('\n');
const SNAPSHOT = '<state_snapshot>summary: the user asked about retry</state_snapshot>';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-gemini-hook-'));
  dirs.push(dir);
  const project = join(dir, 'project');
  const home = join(dir, 'cairn');
  mkdirSync(join(project, 'src', 'net'), { recursive: true });
  mkdirSync(home);
  execFileSync('git', ['init', '-q', project]);
  writeFileSync(join(project, 'src', 'net', 'retry.ts'), SOURCE);
  const transcript = join(dir, 'session.jsonl');
  writeFileSync(transcript, readFileSync(FIXTURE, 'utf8').replaceAll('@CWD@', project));
  return { dir, project, home, transcript };
}

/** A BeforeModel input as Gemini CLI 0.61.0 sends it after compressing (text of the request's contents). */
function beforeModel(transcript: string, project: string, messages: Array<{ role: string; content: string }>) {
  return { session_id: SESSION, transcript_path: transcript, cwd: project, hook_event_name: 'BeforeModel', timestamp: new Date().toISOString(), llm_request: { model: 'gemini-2.5-pro', messages, config: {} } };
}

const compressed = (later: string) => [
  { role: 'user', content: `<session_context>\nThis is the Gemini CLI.\n</session_context>${SNAPSHOT}` },
  { role: 'model', content: 'Got it. Thanks for the additional context!' },
  { role: 'user', content: later },
];

interface Injection {
  hookSpecificOutput: { hookEventName: string; llm_request: { messages: Array<{ role: string; content: string }> } };
}

function hookLog(home: string): Array<Record<string, unknown>> {
  const path = join(home, 'logs', 'hooks.log');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.includes('"message":"hook"')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('cairn hook before-model (Gemini CLI after a compression)', () => {
  it('a request without a compression summary: nothing printed, the store not even opened', async () => {
    const { home, project, transcript } = setup();
    const result = await hookInProcess('before-model', beforeModel(transcript, project, [{ role: 'user', content: 'How long does the retry back-off wait?' }]), home, project);
    expect(result).toEqual({ code: 0, out: '' });
    expect(existsSync(join(home, 'cairn.db'))).toBe(false);
    expect(hookLog(home)).toEqual([]);
  });

  it('after a compression: the post-compact context, with path:line, added to the summary’s message; the same text on every later call', async () => {
    const { home, project, transcript } = setup();
    const later = 'And the cap?';
    const first = await hookInProcess('before-model', beforeModel(transcript, project, compressed(later)), home, project);
    expect(first.code).toBe(0);
    const output = JSON.parse(first.out) as Injection;
    expect(output.hookSpecificOutput.hookEventName).toBe('BeforeModel');
    // Only the messages up to the summary's: Gemini keeps every later content as it was.
    const messages = output.hookSpecificOutput.llm_request.messages;
    expect(messages).toHaveLength(1);
    const [head, context] = messages[0]!.content.split('\n\n<hook_context>');
    expect(head).toBe(compressed(later)[0]!.content);
    expect(context).toMatch(/^cairn: the conversation was just compacted/);
    expect(context).toContain('`export function backoffDelay(attempt: number, baseMs = 250): number {` at src/net/retry.ts:40');
    expect(context).toMatch(/<\/hook_context>$/);
    // Tags in the context are escaped, as Gemini escapes its other hooks' context.
    expect(context!.slice(0, -'</hook_context>'.length)).not.toMatch(/[<>]/);

    // The store changes; the window keeps the text it was given.
    expect((await hookInProcess('stop', { session_id: SESSION, transcript_path: transcript, cwd: project }, home, project)).code).toBe(0);
    const again = await hookInProcess('before-model', beforeModel(transcript, project, compressed(later)), home, project);
    expect(again.out).toBe(first.out);
    const log = hookLog(home).filter((e) => e.event === 'before-model');
    expect(log.map((e) => e.given ?? e.source)).toEqual(['compact', 'cached']);

    // A later compression (another summary) starts another window.
    const next = compressed(later).map((m, i) => (i === 0 ? { ...m, content: m.content.replace('asked about retry', 'asked about retry and the cap') } : m));
    const third = await hookInProcess('before-model', beforeModel(transcript, project, next), home, project);
    expect(JSON.parse(third.out) as Injection).toBeTruthy();
    expect(hookLog(home).filter((e) => e.event === 'before-model').map((e) => e.given ?? e.source)).toEqual(['compact', 'cached', 'compact']);
  });

  it('an item the pending prompt already carries (SessionStart’s or BeforeAgent’s context) is not given twice in one request', async () => {
    const { home, project, transcript } = setup();
    const command = '- ran `sed -n 38,42p src/net/retry.ts` — exit 0';
    const result = await hookInProcess('before-model', beforeModel(transcript, project, compressed(`<hook_context>## Commands\n${command}\n</hook_context>\n\nAnd the cap?`)), home, project);
    const context = (JSON.parse(result.out) as Injection).hookSpecificOutput.llm_request.messages[0]!.content;
    expect(context).not.toContain('sed -n 38,42p');
    expect(context).not.toContain('## Commands');
    expect(context).toContain('src/net/retry.ts:40');
  });

  it('the cached window text is removed at SessionEnd, and other sessions\' entries after a week', async () => {
    const { home, project, transcript } = setup();
    const dir = join(home, 'cache', 'gemini-compress');
    writeGivenContext(home, 'old-session', 'h0', 'old text', Date.now());
    const stale = join(dir, readdirSync(dir)[0]!);
    utimesSync(stale, new Date(Date.now() - 8 * 86_400_000), new Date(Date.now() - 8 * 86_400_000));
    writeGivenContext(home, 'recent-session', 'h1', 'recent text');
    await hookInProcess('before-model', beforeModel(transcript, project, compressed('And the cap?')), home, project);
    expect(existsSync(stale)).toBe(false);
    expect(readGivenContext(home, 'recent-session', 'h1')).toBe('recent text');
    expect(typeof readGivenContext(home, SESSION, findCompression(beforeModel(transcript, project, compressed('And the cap?')))!.hash)).toBe('string');
    expect((await hookInProcess('session-end', { session_id: SESSION, transcript_path: transcript, cwd: project, reason: 'exit' }, home, project)).code).toBe(0);
    expect(readdirSync(dir).length).toBe(1);
    expect(readGivenContext(home, 'recent-session', 'h1')).toBe('recent text');
  });

  it('a malformed request (messages not a list, no session) prints nothing and exits 0', async () => {
    const { home, project, transcript } = setup();
    for (const input of [{ session_id: SESSION, cwd: project, llm_request: { messages: SNAPSHOT } }, { ...beforeModel(transcript, project, compressed('x')), session_id: undefined }, `{"llm_request": "${SNAPSHOT}"`]) {
      expect(await hookInProcess('before-model', input, home, project)).toEqual({ code: 0, out: '' });
    }
  });
});

describe('withoutRepeats / findCompression', () => {
  const compression = (later: string) => findCompression({ llm_request: { messages: compressed(later) } })!;
  it('finds the latest user message holding a summary, not a model message quoting one', () => {
    const found = findCompression({ llm_request: { messages: [...compressed('next'), { role: 'model', content: SNAPSHOT }] } });
    expect(found?.index).toBe(0);
    expect(findCompression({ llm_request: { messages: [{ role: 'model', content: SNAPSHOT }] } })).toBeNull();
    // A snapshot the user pasted into a prompt is not a compression.
    expect(findCompression({ llm_request: { messages: [{ role: 'user', content: `what does this mean? ${SNAPSHOT}` }] } })).toBeNull();
    expect(findCompression({ llm_request: { messages: [{ role: 'user', content: SNAPSHOT }] } })?.index).toBe(0);
  });
  it('drops repeated items, then headings left empty; null when nothing is left', () => {
    const context = 'lead\n\n## Files\n- `a.ts` — read\n\n## Code\n- `f()` at a.ts:3\n';
    expect(withoutRepeats(context, compression('x'))).toBe(context);
    expect(withoutRepeats(context, compression('- `a.ts` — read'))).toBe('lead\n\n## Code\n- `f()` at a.ts:3\n');
    expect(withoutRepeats(context, compression('- `a.ts` — read\n- `f()` at a.ts:3'))).toBeNull();
  });
});

describe('the Gemini CLI 0.61.0 chat the hooks ingest (src/ingest/readers/gemini.ts)', () => {
  const { batch, format } = readTranscript(FIXTURE, null);
  it('reads each tool result once, without the <untrusted_context> envelope, and no hook context as the user’s words', () => {
    expect(format).toBe('gemini-jsonl');
    expect(batch.turns.map((t) => [t.role, t.text.split('\n')[0]])).toEqual([
      ['user', 'How long does the retry back-off wait?'],
      ['tool_call', 'run_shell_command: sed -n 38,42p src/net/retry.ts'],
      ['tool_result', 'Output: // line 38'],
      ['assistant', 'It defines backoffDelay.'],
      ['user', 'Remember that for later.'],
      ['assistant', 'Noted.'],
      ['system', 'Conversation compacted'],
      ['summary', SNAPSHOT],
      ['user', 'And the cap?'],
      ['assistant', 'done'],
    ]);
    // A shell read keeps its lines: the signature is line 40 of the file (printed from line 38).
    expect(batch.turns.find((t) => t.role === 'tool_result')?.text.split('\n')[2]).toBe('export function backoffDelay(attempt: number, baseMs = 250): number {');
    expect(batch.turns.some((t) => t.text.includes('<hook_context>') || t.text.includes('untrusted_context'))).toBe(false);
  });
});
