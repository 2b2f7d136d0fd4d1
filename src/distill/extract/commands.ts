/**
 * Commands the agent ran: test / build / lint / run / install / database commands that
 * succeeded, an error → fix pair when such a command failed and later passed after something was
 * done about it, and the port a server said it listens on.
 */
import type { TurnRecord } from '../../types.js';
import { commandOf, filePathOf, toolClass, type SessionView } from '../session.js';
import { code, oneLine } from '../text.js';
import type { Candidate } from '../types.js';
import { candidate } from './common.js';

export type CommandClass = 'test' | 'typecheck' | 'lint' | 'build' | 'run' | 'install' | 'db' | 'vcs';

export interface ClassifiedCommand {
  cls: CommandClass;
  /** The program and subcommand that identify it (`mix test`, `npm run build`). */
  head: string;
  /** The command as worth repeating: pipes to head/tail/grep and redirections off. */
  command: string;
}

const WRAPPERS = /^(?:(?:[A-Z_][A-Z0-9_]*=\S*\s+)+|(?:npx|bunx|pnpx|pnpm exec|yarn exec|uv run|poetry run|pipenv run|bundle exec|time|sudo|nice|timeout\s+\d+[smh]?)\s+)/;

const CLASS_RULES: Array<[CommandClass, RegExp]> = [
  ['typecheck', /^(?:tsc\b.*--noEmit|(?:npm|pnpm|yarn|bun) (?:run )?(?:typecheck|type-check|tsc)\b|mypy\b|pyright\b|mix dialyzer\b|cargo check\b|vue-tsc\b)/],
  [
    'test',
    /^(?:(?:npm|pnpm|yarn|bun) (?:run )?test\b|(?:npm|pnpm|yarn|bun) run [\w:.-]*test[\w:.-]*|(?:vitest|jest|mocha|ava|tap|pytest|py\.test|tox|nox|rspec|phpunit|ctest)\b|playwright test\b|cypress run\b|python3? -m (?:pytest|unittest)\b|go test\b|cargo (?:test|nextest)\b|mix test\b|rake test\b|rails test\b|dotnet test\b|mvn\b.*\btest\b|(?:\.\/)?gradlew? test\b|make (?:test|check)\b|deno test\b|swift test\b|bun test\b)/,
  ],
  [
    'lint',
    /^(?:eslint|prettier|biome|ruff|black|flake8|pylint|rubocop|shellcheck|stylelint|golangci-lint|gofmt|clippy)\b|^(?:mix (?:credo|format)|cargo (?:clippy|fmt)|go vet|bash -n|(?:npm|pnpm|yarn|bun) (?:run )?(?:lint|format|fmt|check)(?::[\w-]+)?)\b/,
  ],
  ['db', /^(?:mix ecto\.\w+|alembic\b|prisma (?:migrate|db|generate)\b|rails db:\w+|rake db:\w+|python3? manage\.py (?:migrate|makemigrations)\b|knex migrate\b|sequelize db:migrate\b|diesel migration\b|drizzle-kit\b)/],
  [
    'build',
    /^(?:(?:npm|pnpm|yarn|bun) (?:run )?(?:build|compile)(?::[\w-]+)?\b|tsc\b|make\b(?! (?:test|check))|cmake --build\b|cargo build\b|go build\b|mix compile\b|mvn (?:package|install|compile|verify)\b|(?:\.\/)?gradlew? (?:build|assemble)\b|docker (?:build|compose build)\b|vite build\b|next build\b|webpack\b|dotnet build\b|swift build\b|zig build\b|mix assets\.\w+)/,
  ],
  [
    'run',
    /^(?:(?:npm|pnpm|yarn|bun) (?:run )?(?:start|dev|serve|preview)\b|mix phx\.server\b|iex -S mix\b|mix run\b|python3? (?:-m (?!pytest|unittest)[\w.]+|[\w./-]*\.py|manage\.py runserver)\b|uvicorn\b|gunicorn\b|flask run\b|rails s(?:erver)?\b|cargo run\b|go run\b|node [\w./-]+\.[cm]?js\b|deno run\b|docker(?:-| )compose up\b|docker run\b)/,
  ],
  [
    'install',
    /^(?:(?:npm|pnpm) (?:i|install|ci|add)\b|yarn(?: install| add)?$|yarn (?:install|add)\b|bun (?:install|add)\b|pip3? install\b|uv (?:sync|pip install|add)\b|poetry (?:install|add)\b|mix deps\.get\b|bundle install\b|cargo (?:add|fetch)\b|go (?:mod (?:download|tidy)|get)\b|composer install\b)/,
  ],
  ['vcs', /^git (?:commit|push|rebase|merge)\b/],
];

/** Output pipes and redirections that only trim what is shown. */
const TRIM_PIPE = /\s*\|\s*(?:head|tail|grep|rg|less|more|tee|cat|sort|uniq|wc|jq)\b.*$/;
const REDIRECT = /\s*(?:\d?>&\d|[12]?>\s*\/dev\/null|&>\s*\/dev\/null)/g;

function headOf(core: string): string {
  const parts = core.split(/\s+/);
  const [a, b, c] = parts;
  if (a === undefined) return core;
  if (/^(?:npm|pnpm|yarn|bun)$/.test(a) && b === 'run' && c !== undefined) return `${a} run ${c}`;
  if (/^python3?$/.test(a) && b === '-m' && c !== undefined) return `${a} -m ${c}`;
  if (a === 'docker' && (b === 'compose' || b === 'run' || b === 'build')) return `docker ${b}${b === 'compose' && c ? ` ${c}` : ''}`;
  if (b !== undefined && /^[a-z][\w:.-]*$/i.test(b) && !/\.\w{1,4}$/.test(b) && !b.startsWith('-')) return `${a} ${b}`;
  return a;
}

/** Split a command line on `&&`, `||` and `;` outside quotes and `$( … )`. */
export function splitCommandLine(line: string): string[] {
  const out: string[] = [];
  let quote: string | null = null;
  let depth = 0;
  let start = 0;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (quote !== null) {
      if (ch === '\\' && quote !== "'") i++;
      else if (ch === quote) quote = null;
      continue;
    }
    if (ch === '"' || ch === "'" || ch === '`') quote = ch;
    else if (ch === '(' && line[i - 1] === '$') depth++;
    else if (ch === ')' && depth > 0) depth--;
    else if (depth === 0 && (ch === ';' || ((ch === '&' || ch === '|') && line[i + 1] === ch))) {
      out.push(line.slice(start, i));
      if (ch !== ';') i++;
      start = i + 1;
    }
  }
  out.push(line.slice(start));
  return out.map((s) => s.trim()).filter((s) => s.length > 0);
}

/** Ad-hoc runs that are not how the project is run: inline code, scratch files. */
const AD_HOC = /\s-(?:e|c)\s|(?:^|\s)\/tmp\/|\/private\/tmp\//;

/**
 * The first segment of a shell command line that is a test / build / lint / run / install /
 * database / commit command, normalised; null for everything else (ls, cat, grep, git status …).
 * @example classifyCommand('cd app && mix test --seed 0 2>&1 | tail -50') // { cls: 'test', head: 'mix test', command: 'cd app && mix test --seed 0' }
 */
export function classifyCommand(line: string): ClassifiedCommand | null {
  if (line.length > 400 || /<<\s*['"]?\w+/.test(line)) return null;
  const flat = line.replace(/\\\n\s*/g, ' ').trim();
  if (flat.includes('\n')) return null;
  let prefix = '';
  for (const rawSegment of splitCommandLine(flat)) {
    const segment = rawSegment.replace(TRIM_PIPE, '').replace(REDIRECT, '').trim();
    if (segment.length === 0) continue;
    if (/^cd\s+\S+$/.test(segment)) {
      prefix = `${segment} && `;
      continue;
    }
    if (/^(?:export|source|\.|set|echo|sleep|printf)\b/.test(segment)) continue;
    let core = segment;
    for (let i = 0; i < 3; i++) core = core.replace(WRAPPERS, '');
    for (const [cls, rule] of CLASS_RULES) {
      if (!rule.test(core)) continue;
      if (cls === 'run' && AD_HOC.test(` ${core} `)) return null;
      return { cls, head: headOf(core), command: `${prefix}${segment}` };
    }
    return null;
  }
  return null;
}

export type ShellOutcome = 'ok' | 'failed' | 'unknown';

const EXIT_CODE = /(?:Process exited with code|Exit code:?|exit(?:ed with)? (?:code|status))\s*(\d+)/i;
const STILL_RUNNING = /Process running with session ID|running in background|Command running in background/i;
/** Failure markers, case-insensitive. */
const FAILURE =
  /\b[1-9]\d* (?:failures?|failed|errors?)\b|npm ERR!|Traceback \(most recent call last\)|^error(?:\[\w+\])?:|\berror TS\d+|command not found|No such file or directory|Cannot find module|ModuleNotFoundError|SyntaxError:|compilation failed|\*\* \(\w+Error\)|panicked at|^E\s{2,}\w+Error/im;
/** Failure markers that only count in capitals (a log line saying "failed" is not a failed run). */
const FAILURE_CAPS = /\bFAIL(?:ED)?\b|BUILD FAILED/m;
/** A test summary that says nothing failed wins over log noise. */
const ALL_PASSED = /\b0 failures\b|\b\d+ passed\b(?![^\n]*\b[1-9]\d* failed)|\bTests?:\s+\d+ passed\b(?![^\n]*failed)|\bOK \(\d+ tests?\)/i;

/** Whether a shell tool result says the command succeeded. */
export function shellOutcome(result: TurnRecord, cls: CommandClass | null): ShellOutcome {
  if (result.flags.includes('rejection')) return 'unknown';
  const text = result.toolInput ?? result.text;
  const exit = EXIT_CODE.exec(text);
  if (exit) return exit[1] === '0' ? 'ok' : 'failed';
  if (result.isError) return 'failed';
  if (STILL_RUNNING.test(text)) return 'unknown';
  if (cls === 'test' && ALL_PASSED.test(text) && !/\b[1-9]\d* (?:failures?|failed)\b/i.test(text)) return 'ok';
  if (cls !== null && cls !== 'vcs' && (FAILURE.test(text) || FAILURE_CAPS.test(text))) return 'failed';
  return 'ok';
}

const CLASS_TEXT: Record<Exclude<CommandClass, 'vcs'>, (cmd: string) => string> = {
  test: (c) => `Tests run with ${c} (passed).`,
  typecheck: (c) => `Type check: ${c} (passed).`,
  lint: (c) => `Lint / format check: ${c} (passed).`,
  build: (c) => `Build with ${c} (succeeded).`,
  run: (c) => `Run the app with ${c}.`,
  install: (c) => `Install dependencies with ${c}.`,
  db: (c) => `Database task: ${c} (succeeded).`,
};

/** Commands that only look around; they are not part of a fix. */
const READ_ONLY = /^(?:ls|cat|head|tail|grep|rg|find|fd|pwd|echo|which|wc|sed -n|awk|jq|tree|stat|file|git|gh|bd|jj|ps|curl|sleep|cd)\b/;

const ERROR_LINE = /error|fail|exception|cannot|can't|not found|undefined|invalid|denied|refused|missing|expected|panic|not formatted/i;

/** Test and build summaries ("297 tests, 11 failures", "Found 3 errors") say more than a log line. */
const SUMMARY_LINE = /\b\d+ (?:tests?|examples?|specs?)\b.*\b\d+ (?:failures?|failed)\b|\b(?:Tests?|Suites?):?\s+\d+ failed\b|\bFound \d+ errors?\b|\b\d+ errors? generated\b|Total errors: \d+/i;

function errorLine(result: TurnRecord): string {
  const text = (result.toolInput ?? result.text).replace(/\\n/g, '\n');
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l.length > 0 && !/^(?:Exit code|Process exited)/i.test(l));
  const line = lines.find((l) => SUMMARY_LINE.test(l)) ?? lines.find((l) => ERROR_LINE.test(l) && !/^\d{2}:\d{2}:\d{2}/.test(l)) ?? lines.find((l) => ERROR_LINE.test(l)) ?? lines[0] ?? '';
  return oneLine(line, 160);
}

interface ShellRun {
  call: TurnRecord;
  result: TurnRecord | null;
  classified: ClassifiedCommand | null;
  command: string;
  outcome: ShellOutcome;
}

function shellRuns(view: SessionView): ShellRun[] {
  const runs: ShellRun[] = [];
  for (const turn of view.turns) {
    if (turn.role !== 'tool_call' || toolClass(turn.toolName) !== 'shell') continue;
    const command = commandOf(turn);
    if (command === null) continue;
    const classified = classifyCommand(command);
    const result = view.resultOf(turn);
    runs.push({ call: turn, result, classified, command, outcome: result ? shellOutcome(result, classified?.cls ?? null) : 'unknown' });
  }
  return runs;
}

/** How far (in turns) a later success may lie from the failure it fixes. */
const FIX_WINDOW = 60;
/** More actions than this between failure and success: too much happened to name the fix. */
const MAX_FIX_ACTIONS = 6;

export function extractCommands(view: SessionView): Candidate[] {
  const out: Candidate[] = [];
  const runs = shellRuns(view);
  for (const [i, run] of runs.entries()) {
    const { classified } = run;
    if (classified === null || run.result === null) continue;
    if (run.outcome === 'ok' && classified.cls !== 'vcs' && view.isNew(run.result)) {
      out.push(
        candidate(view, run.result, {
          text: CLASS_TEXT[classified.cls](code(classified.command)),
          kind: 'procedure',
          extractor: 'command',
          importance: classified.cls === 'test' || classified.cls === 'build' ? 0.65 : 0.55,
          tags: ['command', classified.cls],
          subject: { key: `cmd:${classified.cls}:${classified.head}`, value: classified.command, onConflict: 'merge' },
        }),
      );
    }
    if (run.outcome === 'failed') {
      const fix = errorFix(view, runs, i);
      if (fix) out.push(fix);
    }
  }
  out.push(...extractPorts(view, runs));
  return out;
}

/** A failing command, the actions after it, and the same command passing later. */
function errorFix(view: SessionView, runs: ShellRun[], failedAt: number): Candidate | null {
  const failed = runs[failedAt] as ShellRun;
  const head = failed.classified?.head;
  if (head === undefined || failed.result === null) return null;
  const success = runs.slice(failedAt + 1).find((r) => r.classified?.head === head);
  if (!success || success.outcome !== 'ok' || success.result === null || !view.isNew(success.result)) return null;
  if (success.call.seq - failed.call.seq > FIX_WINDOW) return null;
  const actions: string[] = [];
  for (const turn of view.turns) {
    if (turn.seq <= failed.call.seq || turn.seq >= success.call.seq || turn.role !== 'tool_call') continue;
    const cls = toolClass(turn.toolName);
    if (cls === 'shell') {
      const command = commandOf(turn);
      if (command === null || READ_ONLY.test(command.trim()) || classifyCommand(command)?.head === head) continue;
      const action = `running ${code(oneLine(command.replace(TRIM_PIPE, '').replace(REDIRECT, ''), 100))}`;
      if (!actions.includes(action)) actions.push(action);
    } else if (cls === 'edit') {
      const path = filePathOf(turn);
      const action = path ? `editing ${code(view.relative(path))}` : null;
      if (action && !actions.includes(action)) actions.push(action);
    }
  }
  if (actions.length === 0 || actions.length > MAX_FIX_ACTIONS) return null;
  const shown = actions.slice(0, 4).join(', ') + (actions.length > 4 ? ` and ${actions.length - 4} more` : '');
  const what = failed.classified && failed.classified.command.length <= 100 ? failed.classified.command : head;
  return candidate(view, success.result, {
    text: `${code(what)} failed with “${errorLine(failed.result)}”; fixed by ${shown}, then it passed.`,
    kind: 'procedure',
    extractor: 'error-fix',
    importance: 0.7,
    tags: ['error-fix', failed.classified?.cls ?? 'command'],
  });
}

const LISTEN =
  /(?:listening|running|started|serving|server|available|ready|Local:|Network:)[^\n]{0,80}?(?:https?:\/\/)?(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]|[\w.-]+\.local)?:(\d{2,5})\b|\b(?:listening on|on port|at port)\s+:?(\d{2,5})\b/i;

/** The port a server says it listens on, tied to the run command that started it. */
function extractPorts(view: SessionView, runs: ShellRun[]): Candidate[] {
  const out: Candidate[] = [];
  const seen = new Set<string>();
  let lastRun: ShellRun | null = null;
  const runByResult = new Map(runs.filter((r) => r.result).map((r) => [(r.result as TurnRecord).id, r]));
  const runByCall = new Map(runs.map((r) => [r.call.id, r]));
  for (const turn of view.turns) {
    const started = runByCall.get(turn.id);
    if (started?.classified?.cls === 'run') lastRun = started;
    if (turn.role !== 'tool_result' || !view.isNew(turn) || lastRun === null) continue;
    const own = runByResult.get(turn.id);
    if (own !== undefined && own.classified?.cls !== 'run') continue;
    const match = LISTEN.exec(turn.toolInput ?? turn.text);
    const port = match?.[1] ?? match?.[2];
    if (port === undefined || Number(port) < 80 || Number(port) > 65535) continue;
    const head = (lastRun.classified as ClassifiedCommand).head;
    if (seen.has(head)) continue;
    seen.add(head);
    out.push(
      candidate(view, turn, {
        text: `${code((lastRun.classified as ClassifiedCommand).command)} serves on port ${port} (http://localhost:${port}).`,
        kind: 'fact',
        extractor: 'port',
        importance: 0.6,
        tags: ['port', 'config'],
        subject: { key: `port:${head}`, value: port, onConflict: 'supersede' },
      }),
    );
  }
  return out;
}
