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
import type { Kind, Scope, Source } from 'cairn-memory';
import {
  FILLERS,
  TEMPLATES,
  at,
  command,
  lineNumber,
  projectPools,
  render,
  signature,
  styleOf,
  type ProjectPool,
  type Slots,
  type Style,
} from './corpus-text.js';
import { Weighted, createRng, zipf, type Rng } from './prng.js';
import { ERRORS, LIBRARIES, NOUNS, PARAPHRASES, PROJECTS, QUALIFIERS, TAGS, VERBS } from './vocab.js';

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
