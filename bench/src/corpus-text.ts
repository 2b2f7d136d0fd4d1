/**
 * How one synthetic memory's text is written: identifiers in each language's case style,
 * file paths, signatures, test commands, and the sentence templates per kind. The order of
 * random draws here is part of the corpus: changing it changes every corpus (bump CORPUS_VERSION).
 */
import type { Kind } from 'cairn-memory';
import { createRng, type Rng } from './prng.js';
import { ERRORS, NOUNS, PROJECTS, PROSE, SHELL_COMMANDS, TEST_RUNNERS, VERBS } from './vocab.js';

export type Language = 'ts' | 'py' | 'rs' | 'go' | 'java' | 'rb';
export type Style = 'camel' | 'snake' | 'pascal';

export const PROJECT_LANGUAGE: readonly Language[] = ['ts', 'ts', 'go', 'py', 'java', 'go', 'rs', 'rs', 'py', 'rb'];
const EXTENSION: Record<Language, string> = { ts: 'ts', py: 'py', rs: 'rs', go: 'go', java: 'java', rb: 'rb' };

export const cap = (w: string): string => w.charAt(0).toUpperCase() + w.slice(1);

export function render(parts: readonly string[], style: Style): string {
  if (style === 'snake') return parts.join('_');
  const pascal = parts.map(cap).join('');
  return style === 'pascal' ? pascal : pascal.charAt(0).toLowerCase() + pascal.slice(1);
}

export function styleOf(language: Language, rng: Rng): Style {
  if (language === 'ts' || language === 'java') return 'camel';
  if (language === 'go') return rng.chance(0.5) ? 'pascal' : 'camel';
  return 'snake';
}

/** What one memory's text is built around; the query for a target is built from it. */
export interface Slots {
  language: Language;
  parts: string[];
  id: string;
  style: Style;
  sig: string;
  path: string;
  line: number;
  testPath: string;
  cmd: string;
  hot: string;
  noun: string;
  noun2: string;
  lib: string;
  lib2: string;
  err: string;
  n: number;
}

export interface ProjectPool {
  language: Language;
  files: string[];
  tests: string[];
  hot: string[];
}

function filePath(language: Language, rng: Rng, test: boolean): string {
  const dir = rng.pick(NOUNS);
  const a = rng.pick(NOUNS);
  const b = rng.pick(NOUNS);
  const ext = EXTENSION[language];
  switch (language) {
    case 'ts':
      return test ? `test/${dir}/${render([a, b], 'camel')}.test.ts` : `src/${dir}/${render([a, b], 'camel')}.${ext}`;
    case 'py':
      return test ? `tests/${dir}/test_${a}_${b}.py` : `${rng.pick(['app', 'pkg', 'lib'])}/${dir}/${a}_${b}.py`;
    case 'rs':
      return test ? `tests/${a}_${b}.rs` : `crates/${dir}/src/${a}_${b}.rs`;
    case 'go':
      return `internal/${dir}/${a}_${b}${test ? '_test' : ''}.go`;
    case 'java':
      return `app/src/${test ? 'test' : 'main'}/java/com/acme/${dir}/${render([a, b], 'pascal')}${test ? 'Test' : ''}.java`;
    case 'rb':
      return test ? `spec/${dir}/${a}_${b}_spec.rb` : `app/${rng.pick(['models', 'services', 'jobs'])}/${a}_${b}.rb`;
  }
}

export function projectPools(seed: number): ProjectPool[] {
  return PROJECTS.map((_, p) => {
    const rng = createRng(seed * 31 + p + 1);
    const language = PROJECT_LANGUAGE[p] as Language;
    const files = Array.from({ length: 240 }, () => filePath(language, rng, false));
    const tests = Array.from({ length: 80 }, () => filePath(language, rng, true));
    const hot = Array.from({ length: 300 }, () => render([rng.pick(VERBS), rng.pick(NOUNS)], styleOf(language, rng)));
    return { language, files, tests, hot };
  });
}

export function signature(s: Omit<Slots, 'sig'>, rng: Rng): string {
  const [a, b, c] = [rng.pick(NOUNS), rng.pick(NOUNS), rng.pick(NOUNS)];
  switch (s.language) {
    case 'ts':
      return `${s.id}(${a}: ${cap(a)}, opts?: ${cap(b)}Options): ${rng.pick([`Promise<${cap(c)}>`, cap(c), 'void', 'boolean', `${cap(c)}[]`])}`;
    case 'py':
      return `def ${s.id}(${a}: ${cap(a)}, *, ${b}: bool = False) -> ${cap(c)} | None`;
    case 'rs':
      return `pub fn ${s.id}(&self, ${a}: &${cap(a)}) -> Result<${cap(c)}, ${cap(b)}Error>`;
    case 'go':
      return `func (s *${cap(a)}Service) ${s.id}(ctx context.Context, ${b}ID string) (*${cap(c)}, error)`;
    case 'java':
      return `public ${cap(c)} ${s.id}(${cap(a)} ${a}, int ${b}Limit)`;
    case 'rb':
      return `def ${s.id}(${a}, ${b}: nil)`;
  }
}

export function command(language: Language, testPath: string, s: { parts: string[]; noun: string }, rng: Rng): string {
  const runner = rng.pick(TEST_RUNNERS[language] as readonly string[]);
  const name = s.parts.join(' ');
  switch (language) {
    case 'ts':
      return `${runner} ${testPath} -t "${name}" ${rng.pick(['--reporter=dot', '--pool=forks', '--bail=1', '--coverage'])}`;
    case 'py':
      return `${runner} ${testPath} -k ${s.parts.join('_')} ${rng.pick(['-x --tb=short', '-q', '-vv -s', '--lf'])}`;
    case 'rs':
      return `${runner} -p ${s.noun} ${s.parts.join('_')} -- ${rng.pick(['--nocapture', '--test-threads=1', '--ignored'])}`;
    case 'go':
      return `${runner} ./internal/${s.noun}/... -run Test${render(s.parts, 'pascal')} ${rng.pick(['-count=1', '-v', '-timeout 30s'])}`;
    case 'java':
      return `${runner} --tests "*${render(s.parts, 'pascal')}*" ${rng.pick(['--info', '--rerun-tasks', '-q'])}`;
    case 'rb':
      return `${runner} ${testPath} ${rng.pick(['--fail-fast', '-e "' + name + '"', '--seed 1234'])}`;
  }
}

type Template = (s: Slots) => string;
export const at = (s: Slots): string => `${s.path}:${s.line}`;

export const TEMPLATES: Record<Kind, readonly Template[]> = {
  fact: [
    (s) => `\`${s.sig}\` is defined in ${at(s)}; it returns early when the ${s.noun} is empty.`,
    (s) => `${at(s)}: ${s.id} holds the ${s.noun} lock while calling ${s.hot}, so never call it from a ${s.noun2} callback.`,
    (s) => `${s.id} in ${s.path} caches ${s.noun} lookups for ${s.n} seconds; call ${s.hot}() after writes or readers see stale data.`,
    (s) => `The ${s.noun2} check lives in ${at(s)} (${s.id}), not in the ${s.noun} middleware.`,
  ],
  decision: [
    (s) => `Decided: ${s.id} moves to ${s.path} and takes the ${s.noun} as an argument instead of reading global state, so tests stay deterministic.`,
    (s) => `We chose ${s.lib} over ${s.lib2} for ${s.noun} handling; ${s.id} at ${at(s)} wraps it so the rest of the code never imports it.`,
    (s) => `Decision: keep ${s.id} synchronous; the async version in ${s.path} deadlocked with the ${s.noun2} pool.`,
  ],
  preference: [
    (s) => `User prefers ${s.lib} to ${s.lib2}; name helpers like ${s.id}, not with Manager or Helper suffixes.`,
    (s) => `Always run \`${s.cmd}\` before pushing changes to ${s.id}; the user dislikes CI failures on ${s.noun} tests.`,
    (s) => `The user wants ${s.noun} errors surfaced, not swallowed: ${s.id} must rethrow with the cause attached.`,
  ],
  correction: [
    (s) => `Correction: ${s.id} is not in the ${s.noun} module, it is in ${at(s)}; the old location was removed in the refactor.`,
    (s) => `User corrected me: do not mock the ${s.noun} in tests for ${s.id}; use the real ${s.noun2} fixture from ${s.testPath}.`,
    (s) => `Wrong assumption fixed: ${s.id} returns null on a missing ${s.noun}, it does not throw ${s.err} (see ${at(s)}).`,
  ],
  procedure: [
    (s) => `To reproduce the flaky ${s.noun} test: \`${s.cmd}\`, then check ${at(s)} (${s.id} logs the retry count).`,
    (s) => `Run \`${s.cmd}\` to rebuild the ${s.noun} fixtures; ${s.id} reads them at startup.`,
    (s) => `Debugging ${s.id}: set ${s.noun.toUpperCase()}_DEBUG=1 and run \`${s.cmd}\`; the trace points at ${at(s)}.`,
  ],
  entity: [
    (s) => `${render(s.parts.slice(1), 'pascal')} (${s.language} type in ${s.path}) owns the ${s.noun} ${s.noun2}; its entry point is ${s.id}.`,
    (s) => `${s.id} is the ${s.noun2} adapter for ${s.lib}; defined at ${at(s)}, used by ${s.hot}.`,
  ],
  continuation: [
    (s) => `Next: finish ${s.id} in ${at(s)}; ${s.testPath} still fails with ${s.err}.`,
    (s) => `In progress: migrating ${s.noun} reads to ${s.id} (${s.path}); remaining: ${s.hot} and the ${s.noun2} tests.`,
  ],
  note: [
    (s) => `${s.id} is slow on large ${s.noun} batches (${s.n} ms for ${s.n * 100} rows); see ${at(s)}.`,
    (s) => `Saw ${s.err} from ${s.id} when the ${s.noun2} was closed early; ${at(s)} is where it is raised.`,
    (s) => `${s.id}: ${s.sig}`,
  ],
};

export const FILLERS: ReadonlyArray<(s: Slots, pool: ProjectPool, rng: Rng) => string> = [
  (s, pool, rng) => `The ${s.noun} path also goes through ${rng.pick(pool.hot)} and ${rng.pick(pool.hot)}.`,
  (_s, pool, rng) => `See also ${rng.pick(pool.files)} for the ${rng.pick(NOUNS)} helpers.`,
  (_s, _pool, rng) => `This matters because ${rng.pick(NOUNS)} ${rng.pick(NOUNS)}s are shared between workers.`,
  (_s, _pool, rng) => `Measured ${rng.range(2, 900)} ms p95 before the change and ${rng.range(1, 90)} ms after.`,
  (_s, _pool, rng) => `Error seen: ${rng.pick(ERRORS)}: ${rng.pick(NOUNS)} ${rng.pick(NOUNS)} not found.`,
  (_s, _pool, rng) => rng.pick(PROSE),
  (_s, _pool, rng) => `Useful command: \`${rng.pick(SHELL_COMMANDS)}\`.`,
  (_s, pool, rng) => `${rng.pick(pool.files)}:${lineNumber(rng)} has the matching ${rng.pick(NOUNS)} check.`,
];

export function lineNumber(rng: Rng): number {
  return 1 + Math.floor(1800 * Math.pow(rng.next(), 1.7));
}
