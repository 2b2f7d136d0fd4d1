import { describe, expect, it } from 'vitest';
import { classifyCommand, shellOutcome, splitCommandLine, extractCommands } from '../../src/distill/extract/commands.js';
import { extractContinuation } from '../../src/distill/extract/continuation.js';
import { extractCorrections, phraseRule } from '../../src/distill/extract/corrections.js';
import { extractInvariants } from '../../src/distill/extract/invariants.js';
import { extractLocations } from '../../src/distill/extract/locations.js';
import { extractSettings } from '../../src/distill/extract/settings.js';
import { extractSignatures, findSignatures } from '../../src/distill/extract/signatures.js';
import { extractStatements, preferenceSubject } from '../../src/distill/extract/statements.js';
import { toolArgs } from '../../src/distill/session.js';
import type { TurnRecord } from '../../src/types.js';
import { Turns, sessionRecord } from './helpers.js';

const texts = (cs: Array<{ text: string }>): string[] => cs.map((c) => c.text);

describe('corrections → rules with their context', () => {
  it('phrases a pushback as a rule, says what the agent had done, and keeps provenance', () => {
    const t = new Turns()
      .user('Make the watcher tests pass.')
      .assistant('I will mock the database in test_watcher.py so the test no longer touches disk.')
      .user("No, don't mock the database — use the sqlite fixture from tests/conftest.py instead.");
    const [c, ...rest] = extractCorrections(t.view());
    expect(rest).toEqual([]);
    expect(c?.kind).toBe('correction');
    expect(c?.text).toMatch(/^don't mock the database — use the sqlite fixture from tests\/conftest\.py instead\./);
    expect(c?.text).toContain('which had said: “I will mock the database in test_watcher.py');
    expect(c?.provenance).toEqual({ transcript: t.session.sourcePath, line: 3, uuid: 'u2', sessionId: 'sess-1', turnId: 'sess-1:u2' });
    expect(c?.tags).toEqual(['correction', 'pushback', 'en']);
  });

  it('takes what the user wants from the message after an interrupt, and names the interrupted command', () => {
    const t = new Turns()
      .user('Deploy the staging build.')
      .tool('Bash', { command: 'rm -rf dist && npm run build' }, '', {})
      .user('[Request interrupted by user for tool use]', ['interrupt'])
      .user('never delete dist, run `npm run build -- --clean` instead');
    const [c] = extractCorrections(t.view());
    expect(c?.text).toMatch(/^never delete dist, run `npm run build -- --clean` instead/);
    expect(c?.text).toContain('interrupted the agent, which had run `rm -rf dist && npm run build`');
    expect(c?.provenance.turnId).toBe('sess-1:u4');
    expect(c?.subject).toBeNull();
  });

  it('keeps nothing for an interrupt followed by an unrelated new request', () => {
    const t = new Turns().user('Refactor the parser.').assistant('Reading the parser now.').user('[Request interrupted by user]', ['interrupt']).user('hi');
    expect(extractCorrections(t.view())).toEqual([]);
  });

  it('reads corrections in other languages and skips subagent sessions', () => {
    const ru = new Turns().user('Почини тесты').assistant('Я удалю файл config.yaml.').user('нет, не удаляй config.yaml, поправь ключ timeout');
    const [c] = extractCorrections(ru.view());
    expect(c?.text).toMatch(/^не удаляй config\.yaml/);
    expect(c?.tags).toContain('ru');
    const sub = new Turns(sessionRecord('sess-1/agent-1', { parentId: 'sess-1' })).user('Search').assistant('Found x.').user("no, that's wrong");
    expect(extractCorrections(sub.view())).toEqual([]);
  });

  it('emits a correction once: only when its turn is new', () => {
    const t = new Turns().user('Go').assistant('Using npm.').user('no, use pnpm instead of npm');
    expect(extractCorrections(t.view(3))).toEqual([]);
    const [c] = extractCorrections(t.view(2));
    expect(c?.subject).toEqual({ key: 'pref:package-manager', value: 'pnpm', onConflict: 'supersede' });
  });

  it('strips the pushback cue only when a rule remains', () => {
    expect(phraseRule('no, use the staging bucket')).toBe('use the staging bucket');
    expect(phraseRule('no!')).toBe('no!');
    // As written: a file name at the start keeps its case.
    expect(phraseRule('no, package.json stays as it is')).toBe('package.json stays as it is');
  });
});

describe('decisions and preferences', () => {
  it('finds preferences in the user’s words and decisions in both', () => {
    const t = new Turns()
      .user('Set up the project. I prefer terse commit messages. Always run `pnpm lint` before committing.')
      .assistant('Decided to use `zod` for the config schema since the MCP SDK already depends on it.')
      .user("let's go with SQLite for the cache rather than Redis");
    const found = extractStatements(t.view());
    expect(found.map((c) => [c.kind, c.text])).toEqual([
      ['preference', 'I prefer terse commit messages.'],
      ['preference', 'Always run `pnpm lint` before committing.'],
      ['decision', 'Decided to use `zod` for the config schema since the MCP SDK already depends on it.'],
      ['decision', "let's go with SQLite for the cache rather than Redis"],
    ]);
    expect(found[3]?.subject).toEqual({ key: 'pref:database', value: 'sqlite', onConflict: 'review' });
  });

  it('reads preferences in German, French, Spanish, Chinese and Japanese', () => {
    const t = new Turns()
      .user('Bitte verwende immer pnpm statt npm.')
      .user('Je préfère des commits atomiques avec `git add -p`.')
      .user('Nunca uses `any` en TypeScript.')
      .user('不要使用 var，总是用 const。')
      .user('テストは常に vitest で実行してください。');
    expect(extractStatements(t.view()).map((c) => c.kind)).toEqual(['preference', 'preference', 'preference', 'preference', 'preference']);
  });

  it('keeps the rule of a lower-case message, not the whole message, and no task request as a preference', () => {
    const t = new Turns()
      .user('plan the session tracking')
      .assistant('Here is the design.')
      .user('great, prepare a step by step plan with action items. important not to commit changes until the final step. start from the abstractions')
      .user('use the Spinner instead of the inlined spinner');
    expect(extractStatements(t.view()).map((c) => [c.kind, c.text])).toEqual([['preference', 'important not to commit changes until the final step.']]);
  });

  it('skips questions, agent intentions and turns already kept as corrections', () => {
    const t = new Turns()
      .user('Should we always use pnpm?')
      .assistant("I'll use the Read tool to look at `src/a.ts`.")
      .assistant('Done.')
      .user("no, don't touch src/a.ts");
    expect(extractStatements(t.view())).toEqual([]);
  });

  it('knows a preference target only where the text is about choosing it', () => {
    expect(preferenceSubject('several processes can run in different tabs')).toBeNull();
    expect(preferenceSubject('use tabs, not spaces, for indentation')).toEqual({ key: 'pref:indentation', value: 'tabs' });
    expect(preferenceSubject('use pnpm instead of npm')).toEqual({ key: 'pref:package-manager', value: 'pnpm' });
    expect(preferenceSubject('npm or pnpm, either is fine to use')).toBeNull();
  });
});

describe('commands, error → fix, ports', () => {
  it('classifies and normalises commands, quote-aware', () => {
    expect(classifyCommand('cd app && mix test --seed 0 2>&1 | tail -50')).toEqual({ cls: 'test', head: 'mix test', command: 'cd app && mix test --seed 0' });
    expect(classifyCommand('MIX_ENV=test npx vitest run test/a.test.ts')).toMatchObject({ cls: 'test', head: 'vitest run' });
    expect(classifyCommand('npm run build')).toMatchObject({ cls: 'build', head: 'npm run build' });
    expect(classifyCommand('npx tsc -p tsconfig.json --noEmit')).toMatchObject({ cls: 'typecheck' });
    expect(classifyCommand('python -m pytest tests -q')).toMatchObject({ cls: 'test', head: 'python -m pytest' });
    expect(classifyCommand('python manage.py migrate')).toMatchObject({ cls: 'db' });
    expect(classifyCommand("mix run -e 'IO.puts(1); IO.puts(2)'")).toBeNull();
    expect(classifyCommand('python /tmp/scratch.py')).toBeNull();
    expect(classifyCommand('ls -la && cat README.md')).toBeNull();
    expect(classifyCommand('git commit -m "fix; really"')).toMatchObject({ cls: 'vcs', head: 'git commit' });
    expect(splitCommandLine('echo "a && b"; npm test || true')).toEqual(['echo "a && b"', 'npm test', 'true']);
  });

  it('tells success from failure by exit code, error flag and failure markers', () => {
    const t = new Turns()
      .tool('Bash', { command: 'npm test' }, 'Tests: 3 failed, 10 passed')
      .tool('Bash', { command: 'npm test' }, 'Tests: 13 passed')
      .tool('exec_command', { cmd: 'cargo build' }, 'Process exited with code 101\nerror[E0308]: mismatched types')
      .tool('Bash', { command: 'npm test' }, 'boom', { isError: true });
    const results = t.turns.filter((x) => x.role === 'tool_result');
    expect(results.map((r) => shellOutcome(r, 'test'))).toEqual(['failed', 'ok', 'failed', 'failed']);
  });

  it('keeps commands that succeeded, merged by tool, and pairs a failure with its fix', () => {
    const t = new Turns()
      .user('Fix the failing build.')
      .tool('Bash', { command: 'npm run build 2>&1 | tail -20' }, "src/a.ts(3,1): error TS2304: Cannot find name 'foo'.\nFound 1 error.", { isError: true })
      .tool('Read', { file_path: '/home/dev/app/src/a.ts' }, '     1→export const x = foo;')
      .tool('Edit', { file_path: '/home/dev/app/src/a.ts', old_string: 'foo', new_string: 'bar' }, 'ok')
      .tool('Bash', { command: 'npm run build' }, 'built in 1.2s')
      .tool('Bash', { command: 'ls -la' }, 'a b c');
    const found = extractCommands(t.view());
    expect(texts(found)).toEqual([
      '`npm run build` failed with “Found 1 error.”; fixed by editing `src/a.ts`, then it passed.',
      'Build with `npm run build` (succeeded).',
    ]);
    expect(found[1]?.subject).toEqual({ key: 'cmd:build:npm run build', value: 'npm run build', onConflict: 'merge' });
    expect(found[0]?.kind).toBe('procedure');
    expect(found[0]?.provenance.turnId).toBe(found[1]?.provenance.turnId);
  });

  it('does not call a plain retry a fix', () => {
    const t = new Turns().tool('Bash', { command: 'npm test' }, '1 failed').tool('Bash', { command: 'npm test' }, 'all passed');
    expect(texts(extractCommands(t.view()))).toEqual(['Tests run with `npm test` (passed).']);
  });

  it('remembers the port a dev server reports, for the command that started it', () => {
    const t = new Turns().tool('Bash', { command: 'npm run dev', run_in_background: true }, 'Command running in background with ID: b1').tool('BashOutput', { bash_id: 'b1' }, '  VITE v5  ready in 300 ms\n  ➜  Local:   http://localhost:5173/');
    const ports = extractCommands(t.view()).filter((c) => c.extractor === 'port');
    expect(ports.map((c) => [c.text, c.subject?.key, c.subject?.value])).toEqual([['`npm run dev` serves on port 5173 (http://localhost:5173).', 'port:npm run dev', '5173']]);
  });
});

describe('signatures', () => {
  it('reads declarations with their line numbers from Read output of edited files', () => {
    const read = [
      '    10→import { x } from "./x.js";',
      '    12→export async function parseConfig(path: string,',
      '    13→  options: { strict?: boolean } = {}): Promise<Config> {',
      '    30→export interface Config {',
      '    40→function helper() {',
      '    50→export class Loader {',
      '    51→  async load(name: string): Promise<Buffer> {',
      '    52→  private cache(key: string): void {',
    ].join('\n');
    const t = new Turns()
      .tool('Read', { file_path: '/home/dev/app/src/config.ts' }, read)
      .tool('Edit', { file_path: '/home/dev/app/src/config.ts', old_string: 'a', new_string: 'b' }, 'ok')
      .tool('Read', { file_path: '/home/dev/app/src/other.ts' }, '     1→export function notEdited(): void {');
    const found = extractSignatures(t.view());
    expect(texts(found)).toEqual([
      '`export async function parseConfig(path: string, options: { strict?: boolean } = {}): Promise<Config>` — src/config.ts:12',
      '`async load(name: string): Promise<Buffer>` — src/config.ts:51',
    ]);
    // Bare declarations (`export interface Config`, `export class Loader`, `function helper()`) say no more than the path.
    expect(found[0]?.subject).toEqual({ key: 'sig:src/config.ts#parseConfig', value: 'export async function parseConfig(path: string, options: { strict?: boolean } = {}): Promise<Config>', onConflict: 'supersede' });
    expect(found[0]?.files).toEqual(['src/config.ts:12']);
  });

  it('finds definitions in other languages and in grep output', () => {
    expect(findSignatures('a.py', 'def process(path: Path, *, force: bool = False) -> list[str]:\n    def _inner():\nclass Resolver(Base):').map((s) => s.signature)).toEqual([
      'def process(path: Path, *, force: bool = False) -> list[str]:',
      'class Resolver(Base):',
    ]);
    expect(findSignatures('a.go', 'func (s *Server) Handle(w http.ResponseWriter, r *http.Request) {').map((s) => s.symbol)).toEqual(['Handle']);
    expect(findSignatures('a.rs', 'pub async fn fetch(url: &str) -> Result<Bytes> {').map((s) => s.symbol)).toEqual(['fetch']);
    expect(findSignatures('a.ex', '  def render(messages, opts \\\\ []) do\n  defp private(x), do: x\n  def short(x), do: x + 1\n  defmacro with_span(name, attrs \\\\ %{}, do: block) do').map((s) => s.signature)).toEqual([
      'def render(messages, opts \\\\ [])',
      'def short(x)',
      'defmacro with_span(name, attrs \\\\ %{}, do: block)',
    ]);
    expect(findSignatures('a.ts', 'export type Action =\n  | Add\n  | Remove;').map((s) => s.signature)).toEqual(['export type Action = | Add | Remove;']);
    const t = new Turns().tool('Grep', { pattern: 'def process_workspace_changes' }, 'src/workspace/resolver.py:214:def process_workspace_changes(path: Path) -> None:');
    expect(texts(extractSignatures(t.view()))).toEqual(['`def process_workspace_changes(path: Path) -> None:` — src/workspace/resolver.py:214']);
  });
});

describe('settings and versions', () => {
  it('keeps the config keys and dependency versions an edit changed', () => {
    const t = new Turns()
      .tool('Edit', { file_path: '/home/dev/app/config/dev.yaml', old_string: 'port: 3000\nhost: localhost', new_string: 'port: 4000\nhost: localhost' }, 'ok')
      .tool('Edit', { file_path: '/home/dev/app/package.json', old_string: '"vitest": "^2.0.0",', new_string: '"vitest": "^3.2.7",\n    "zod": "^4.0.0",' }, 'ok')
      .tool('Edit', { file_path: '/home/dev/app/src/index.ts', old_string: 'a = 1', new_string: 'a = 2' }, 'ok');
    const found = extractSettings(t.view());
    expect(found.map((c) => [c.text, c.subject?.key])).toEqual([
      ['Setting `port` = `4000` in config/dev.yaml.', 'setting:config/dev.yaml#port'],
      ['Dependency `vitest` is at `^3.2.7` in package.json.', 'version:package.json#vitest'],
      ['Dependency `zod` is at `^4.0.0` in package.json.', 'version:package.json#zod'],
    ]);
  });

  it('takes only scalar values in code-like config files', () => {
    const t = new Turns().tool('Edit', { file_path: '/home/dev/app/config/test.exs', old_string: 'x', new_string: 'config :app, Repo,\n  pool_size: 10,\n  exporter: exporter\nconfig :opentelemetry, traces_exporter: :none' }, 'ok');
    expect(extractSettings(t.view()).map((c) => c.text)).toEqual(['Setting `pool_size` = `10` in config/test.exs.', 'Setting `traces_exporter` = `:none` in config/test.exs.']);
  });
});

describe('path:line findings and invariants', () => {
  it('keeps sentences that point at a line and say something, not intentions', () => {
    const t = new Turns().assistant(
      'Let me look at src/ws/resolver.rs:200 first.\n' +
        'The race is in src/ws/resolver.rs:214 where the watcher reads metadata before acquire_lock runs.\n' +
        '- `src/ws/mod.rs:12`\n' +
        'Invariant: acquire_lock() must be called before touching workspace metadata.',
    );
    expect(texts(extractLocations(t.view()))).toEqual(['The race is in src/ws/resolver.rs:214 where the watcher reads metadata before acquire_lock runs.']);
    expect(extractLocations(t.view())[0]?.files).toEqual(['src/ws/resolver.rs:214']);
    expect(texts(extractInvariants(t.view()))).toEqual(['Invariant: acquire_lock() must be called before touching workspace metadata.']);
  });

  it('does not take plans for invariants', () => {
    const t = new Turns().assistant('We must update `parse()` next. I must check src/a.ts first.');
    expect(extractInvariants(t.view())).toEqual([]);
  });

  it('never reads injected context or compaction summaries', () => {
    const t = new Turns()
      .assistant('<system-reminder>The race is in src/ws/resolver.rs:214 where it must lock.</system-reminder>')
      .assistant('# cairn memory — app\nThe race is in src/a.ts:3 where `lock()` must run first.');
    expect(extractLocations(t.view())).toEqual([]);
    expect(extractInvariants(t.view())).toEqual([]);
  });
});

describe('continuation state', () => {
  it('records the task, files being edited, open errors, next steps and the latest update', () => {
    const t = new Turns()
      .user('Add retries to the HTTP client in src/http.ts.')
      .tool('Edit', { file_path: '/home/dev/app/src/http.ts', old_string: 'a', new_string: 'b' }, 'ok')
      .tool('Bash', { command: 'npm test' }, 'Tests: 2 failed, 30 passed', { isError: true })
      .tool('TodoWrite', { todos: [{ content: 'Add backoff', status: 'completed' }, { content: 'Fix retry test', status: 'in_progress' }, { content: 'Update README', status: 'pending' }] }, 'ok')
      .assistant('Great. The retry loop is in place; two tests still expect a single attempt.')
      .user('continue');
    const [c] = extractContinuation(t.view());
    expect(c?.text).toBe(
      [
        'Task: Add retries to the HTTP client in src/http.ts. (then: “continue”)',
        'Files being edited: src/http.ts',
        'Open errors: `npm test` fails: “Tests: 2 failed, 30 passed”',
        'Next steps: [in progress] Fix retry test; Update README',
        'Latest update: The retry loop is in place; two tests still expect a single attempt.',
        'Session: sess-1 on main · 2026-01-05 09:08',
      ].join('\n'),
    );
    expect(c).toMatchObject({ kind: 'continuation', scope: 'session', subject: { key: 'continuation:sess-1', onConflict: 'supersede' } });
  });

  it('reads a todo list cut in the middle, and closes an error once the command passes', () => {
    const cut = '{"todos":[{"content":"Write the parser","status":"in_progress"},{"content":"Document it","status":"pending"},{"content":"Shi';
    const t = new Turns()
      .user('Write the parser for the config format.')
      .tool('Bash', { command: 'npm test' }, '1 failed', { isError: true })
      .tool('Bash', { command: 'npm test' }, 'ok')
      .tool('TodoWrite', cut, 'ok');
    expect(toolArgs(t.turns[5] as TurnRecord)).toEqual({ content: 'Write the parser' });
    const [c] = extractContinuation(t.view());
    expect(c?.text).toBe('Task: Write the parser for the config format.\nNext steps: [in progress] Write the parser; Document it\nSession: sess-1 on main · 2026-01-05 09:06');
  });

  it('is only written for sessions with new turns and a user request', () => {
    const t = new Turns().user('Build it.').assistant('Built.');
    expect(extractContinuation(t.view(2))).toEqual([]);
    expect(extractContinuation(new Turns().assistant('hello').view())).toEqual([]);
  });
});
