/**
 * The synthetic corpus: memories that look like a coding agent's (identifiers in several case
 * styles, signatures in several languages, `path:line` findings, commands with flags, prose
 * rules, preferences, corrections and decisions, several projects and scopes, realistic kinds,
 * tags and lengths), plus queries whose answer is known, so latency at scale is measured on
 * searches that find something and a hit rate is reported next to it.
 *
 * Deterministic: the same (version, seed, size) gives the same memories in the same order on
 * every machine. Memories are generated one at a time, so 1M never sits in memory at once.
 */
import type { Kind, Scope, Source } from '../types.js';
import { Weighted, createRng, zipf, type Rng } from './prng.js';
import {
  ERRORS,
  LIBRARIES,
  NOUNS,
  PARAPHRASES,
  PROJECTS,
  PROSE,
  QUALIFIERS,
  SHELL_COMMANDS,
  TAGS,
  TEST_RUNNERS,
  VERBS,
} from './vocab.js';

/** Bump when anything below (or in vocab.ts) changes what is generated: cached corpora are keyed by it. */
export const CORPUS_VERSION = 'corpus-v1';
/** The corpus's "now": recency is computed against it so results do not drift with the calendar. */
export const CORPUS_NOW = Date.UTC(2026, 0, 1);
const SPAN_MS = 365 * 86_400_000;

export interface CorpusOptions {
  seed: number;
  size: number;
  /** Memories that are the known answer of one query each. @default min(1000, ceil(size / 10)) */
  queries?: number;
}

export type QueryType = 'identifier' | 'path-line' | 'words';

/** A query whose answer is known: memory `target` (an index into the corpus). */
export interface CorpusQuery {
  /** Position in a seeded shuffle: take queries in this order so any prefix is a fair sample. */
  order: number;
  text: string;
  type: QueryType;
  target: number;
  /** The project the query is asked from (the target's, or any for a user-scope target). */
  project: string;
}

export interface CorpusMemory {
  index: number;
  text: string;
  kind: Kind;
  scope: Scope;
  /** Null for user-scope memories. */
  project: string | null;
  session: string;
  tags: string[];
  source: Source;
  /** Set on about one in five memories; otherwise the kind's default applies. */
  importance: number | null;
  pinned: boolean;
  createdAt: number;
  /** Index of an earlier memory this one revises (its validity is closed). */
  revises: number | null;
  /** Soft-deleted when written (every real store holds forgotten rows). */
  forgotten: boolean;
  /** The query this memory is the known answer of, when it is a target. */
  query: CorpusQuery | null;
}

type Language = 'ts' | 'py' | 'rs' | 'go' | 'java' | 'rb';
type Style = 'camel' | 'snake' | 'pascal';

const PROJECT_LANGUAGE: readonly Language[] = ['ts', 'ts', 'go', 'py', 'java', 'go', 'rs', 'rs', 'py', 'rb'];
const EXTENSION: Record<Language, string> = { ts: 'ts', py: 'py', rs: 'rs', go: 'go', java: 'java', rb: 'rb' };

const KIND_WEIGHTS = new Weighted<Kind>([
  ['fact', 30],
  ['note', 14],
  ['procedure', 12],
  ['entity', 11],
  ['decision', 10],
  ['correction', 8],
  ['continuation', 7],
  ['preference', 8],
]);
const SOURCE_WEIGHTS = new Weighted<Source>([
  ['ingest', 50],
  ['distill', 15],
  ['manual', 15],
  ['hook', 12],
  ['import', 8],
]);
const PROJECT_WEIGHTS = zipf(PROJECTS.map((_, i) => i), 0.8);
const TAG_WEIGHTS = zipf(TAGS, 1);

const cap = (w: string): string => w.charAt(0).toUpperCase() + w.slice(1);

function render(parts: readonly string[], style: Style): string {
  if (style === 'snake') return parts.join('_');
  const pascal = parts.map(cap).join('');
  return style === 'pascal' ? pascal : pascal.charAt(0).toLowerCase() + pascal.slice(1);
}

function styleOf(language: Language, rng: Rng): Style {
  if (language === 'ts' || language === 'java') return 'camel';
  if (language === 'go') return rng.chance(0.5) ? 'pascal' : 'camel';
  return 'snake';
}

/** What one memory's text is built around; the query for a target is built from it. */
interface Slots {
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

interface ProjectPool {
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

function projectPools(seed: number): ProjectPool[] {
  return PROJECTS.map((_, p) => {
    const rng = createRng(seed * 31 + p + 1);
    const language = PROJECT_LANGUAGE[p] as Language;
    const files = Array.from({ length: 240 }, () => filePath(language, rng, false));
    const tests = Array.from({ length: 80 }, () => filePath(language, rng, true));
    const hot = Array.from({ length: 300 }, () => render([rng.pick(VERBS), rng.pick(NOUNS)], styleOf(language, rng)));
    return { language, files, tests, hot };
  });
}

function signature(s: Omit<Slots, 'sig'>, rng: Rng): string {
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

function command(language: Language, testPath: string, s: { parts: string[]; noun: string }, rng: Rng): string {
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
const at = (s: Slots): string => `${s.path}:${s.line}`;

const TEMPLATES: Record<Kind, readonly Template[]> = {
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

const FILLERS: ReadonlyArray<(s: Slots, pool: ProjectPool, rng: Rng) => string> = [
  (s, pool, rng) => `The ${s.noun} path also goes through ${rng.pick(pool.hot)} and ${rng.pick(pool.hot)}.`,
  (_s, pool, rng) => `See also ${rng.pick(pool.files)} for the ${rng.pick(NOUNS)} helpers.`,
  (_s, _pool, rng) => `This matters because ${rng.pick(NOUNS)} ${rng.pick(NOUNS)}s are shared between workers.`,
  (_s, _pool, rng) => `Measured ${rng.range(2, 900)} ms p95 before the change and ${rng.range(1, 90)} ms after.`,
  (_s, _pool, rng) => `Error seen: ${rng.pick(ERRORS)}: ${rng.pick(NOUNS)} ${rng.pick(NOUNS)} not found.`,
  (_s, _pool, rng) => rng.pick(PROSE),
  (_s, _pool, rng) => `Useful command: \`${rng.pick(SHELL_COMMANDS)}\`.`,
  (_s, pool, rng) => `${rng.pick(pool.files)}:${lineNumber(rng)} has the matching ${rng.pick(NOUNS)} check.`,
];

function lineNumber(rng: Rng): number {
  return 1 + Math.floor(1800 * Math.pow(rng.next(), 1.7));
}

/** Target length: mostly 60–300 characters, a tail to about 1,500. */
function targetLength(rng: Rng): number {
  if (rng.chance(0.84)) return 60 + Math.floor(240 * Math.pow(rng.next(), 1.3));
  return 300 + Math.floor(1200 * Math.pow(rng.next(), 2.2));
}

function restyle(parts: string[], style: Style, rng: Rng): string {
  const other: Style[] = (['camel', 'snake', 'pascal'] as const).filter((x) => x !== style);
  return render(parts, rng.pick(other));
}

function buildQuery(s: Slots, text: string, rng: Rng): { text: string; type: QueryType } {
  const hasLocation = text.includes(at(s));
  const roll = rng.next();
  const para = rng.pick(PARAPHRASES);
  if (hasLocation && roll < 0.3) return { type: 'path-line', text: `${para} ${at(s)}` };
  if (roll < 0.7) {
    const id = restyle(s.parts, s.style, rng);
    return { type: 'identifier', text: rng.chance(0.5) ? `${para} ${id}` : `${id} ${para}` };
  }
  const base = text.includes(s.path) ? (s.path.split('/').pop() as string) : para;
  return { type: 'words', text: `${s.parts.join(' ')} ${base}` };
}

interface Revisable {
  index: number;
  text: string;
  kind: Kind;
  scope: Scope;
  project: string | null;
  tags: string[];
}

/** Pick `count` distinct indices in [0, size), in a seeded random order. */
function chooseTargets(size: number, count: number, rng: Rng): Map<number, number> {
  const out = new Map<number, number>();
  while (out.size < count) {
    const index = rng.int(size);
    if (!out.has(index)) out.set(index, out.size);
  }
  return out;
}

/** Default number of queries with known answers for a corpus of `size`. */
export function defaultQueryCount(size: number): number {
  return Math.min(1000, Math.ceil(size / 10));
}

/** Generate the corpus, one memory at a time. */
export function* generateCorpus(options: CorpusOptions): Generator<CorpusMemory> {
  const { seed, size } = options;
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`corpus size must be a positive integer (got ${size})`);
  const queryCount = Math.min(size, options.queries ?? defaultQueryCount(size));
  const rng = createRng(seed);
  const targets = chooseTargets(size, queryCount, rng.fork(1));
  const pools = projectPools(seed);
  const used = new Set<string>();
  const recent: Revisable[] = [];
  const step = SPAN_MS / size;
  const start = CORPUS_NOW - SPAN_MS;
  const sessionLength = 40;

  for (let index = 0; index < size; index++) {
    const createdAt = Math.floor(start + index * step + rng.next() * step * 0.9);
    const session = `bench-${seed}-${Math.floor(index / sessionLength)}`;
    const order = targets.get(index);
    const isTarget = order !== undefined;

    if (!isTarget && recent.length > 50 && rng.chance(0.03)) {
      const [old] = recent.splice(rng.int(recent.length), 1) as [Revisable];
      const line = lineNumber(rng);
      yield {
        index,
        text: `${old.text.replace(/:(\d+)\b/, `:${line}`)} (revised: checked again at line ${line})`,
        kind: old.kind,
        scope: old.scope,
        project: old.project,
        session,
        tags: old.tags,
        source: 'manual',
        importance: null,
        pinned: false,
        createdAt,
        revises: old.index,
        forgotten: false,
        query: null,
      };
      continue;
    }

    const kind = KIND_WEIGHTS.draw(rng);
    const projectIndex = PROJECT_WEIGHTS.draw(rng);
    const projectId = PROJECTS[projectIndex] as string;
    const pool = pools[projectIndex] as ProjectPool;
    const userOdds = kind === 'preference' ? 0.5 : kind === 'procedure' ? 0.15 : 0.06;
    const sessionOdds = kind === 'continuation' ? 0.6 : 0.1;
    const scopeRoll = rng.next();
    const scope: Scope = scopeRoll < userOdds ? 'user' : scopeRoll < userOdds + sessionOdds ? 'session' : 'project';

    // The primary identifier is unique in the corpus, so the query built from it has one answer.
    const style = styleOf(pool.language, rng);
    let parts: string[] = [];
    let id = '';
    for (let attempt = 0; attempt < 8; attempt++) {
      parts = [rng.pick(VERBS)];
      if (attempt > 2 || rng.chance(0.6)) parts.push(rng.pick(QUALIFIERS));
      parts.push(rng.pick(NOUNS));
      if (attempt > 4 || rng.chance(0.35)) parts.push(rng.pick(NOUNS));
      id = render(parts, style);
      if (!used.has(id.toLowerCase())) break;
    }
    used.add(id.toLowerCase());
    const path = rng.chance(0.7) ? rng.pick(pool.files.slice(0, 60)) : rng.pick(pool.files);
    const testPath = rng.pick(pool.tests);
    const noun = rng.pick(NOUNS);
    const base = {
      language: pool.language,
      parts,
      id,
      style,
      path,
      line: lineNumber(rng),
      testPath,
      cmd: '',
      hot: rng.pick(pool.hot),
      noun,
      noun2: rng.pick(NOUNS),
      lib: rng.pick(LIBRARIES),
      lib2: rng.pick(LIBRARIES),
      err: rng.pick(ERRORS),
      n: rng.range(2, 600),
    };
    const slots: Slots = { ...base, sig: signature(base, rng), cmd: command(pool.language, testPath, { parts, noun }, rng) };
    let text = rng.pick(TEMPLATES[kind])(slots);
    const length = targetLength(rng);
    while (text.length < length) {
      const filler = rng.pick(FILLERS)(slots, pool, rng);
      if (text.length + 1 + filler.length > 1500) break;
      text = `${text} ${filler}`;
    }

    const tags: string[] = [];
    if (rng.chance(0.65)) {
      const count = rng.chance(0.6) ? 1 : rng.chance(0.7) ? 2 : 3;
      for (let i = 0; i < count; i++) {
        const tag = TAG_WEIGHTS.draw(rng);
        if (!tags.includes(tag)) tags.push(tag);
      }
    }
    const memory: CorpusMemory = {
      index,
      text,
      kind,
      scope,
      project: scope === 'user' ? null : projectId,
      session,
      tags,
      source: SOURCE_WEIGHTS.draw(rng),
      importance: rng.chance(0.2) ? rng.pick([0.9, 0.6, 0.3]) : null,
      pinned: rng.chance(0.003),
      createdAt,
      revises: null,
      forgotten: !isTarget && rng.chance(0.01),
      query: null,
    };
    if (isTarget) {
      const query = buildQuery(slots, text, rng);
      memory.query = { order, ...query, target: index, project: memory.project ?? projectId };
    } else if (!memory.forgotten) {
      recent.push({ index, text, kind, scope, project: memory.project, tags });
      if (recent.length > 2000) recent.shift();
    }
    yield memory;
  }
}

/** One canonical line per memory: the corpus's sha256 is taken over these. */
export function canonicalLine(memory: CorpusMemory): string {
  return JSON.stringify([
    memory.index,
    memory.kind,
    memory.scope,
    memory.project,
    memory.session,
    memory.tags,
    memory.source,
    memory.importance,
    memory.pinned,
    memory.createdAt,
    memory.revises,
    memory.forgotten,
    memory.text,
  ]);
}
