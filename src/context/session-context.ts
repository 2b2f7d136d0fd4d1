/**
 * The context for a session that has a history (after /compact, or on resume): its details —
 * session facts, the calls it made, this session's rules, decisions and where it left off — then
 * project knowledge, ranked by the value-per-token model (value-model.ts) and packed greedily into
 * the budget, one line per detail saying why it matters. No bare identifier lists, no repeated
 * notices: a detail another chosen line already carries verbatim is skipped.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Deps } from '../deps.js';
import { stalenessOf } from '../recall/recall.js';
import { indexTerms } from '../store/tokenize.js';
import { FileReader } from '../workspace/files.js';
import type { Memory, TurnRecord } from '../types.js';
import { activityOf, addCallFacts, callDetails, factDetails, memoryDetail, memoryLine, mergePathVariants, type Detail, type DetailKind } from './details.js';
import { estimateTokens } from '../tokens.js';
import { markLearned, type Learned } from './learn.js';
import { DEFAULT_VALUE_MODEL, valueOf, type ValueModel } from './value-model.js';

export interface SessionPackInput {
  session: string;
  turns: readonly TurnRecord[];
  memories: readonly Memory[];
  budget: number;
  ranker: string;
  seed: number;
  model?: ValueModel;
  /** Memory and session fact ids the agent already has in this context window (the injection ledger): left out. */
  exclude?: ReadonlySet<string>;
  /** Text already in the agent's context window (the compaction summary): a detail it holds verbatim is left out. */
  inContext?: string;
  /**
   * Grow `budget` with the session's size (after /compact, {@link sizedBudget}); `spent` is what the
   * whole context spent before the details (its header, core memory), counted in the rule's total.
   */
  grow?: SessionBudget & { spent: number };
  /** What earlier sessions of the project needed after their compactions (learn.ts `learnedDetails`): sets `usedBefore`. */
  learned?: Learned;
}

/**
 * The post-compact budget sized to the session: the whole context gets `share` × the tokens of the
 * session's own candidate lines ({@link sessionPoolTokens}), never less than the fixed budget and
 * never more than `max`. How many details the next hour needs grows with the work before the
 * compaction, and a fixed budget cannot fit both a short session and a long one
 * (docs/BENCHMARKS.md, fidelity: "A budget sized to the session").
 */
export interface SessionBudget {
  share: number;
  max: number;
}

/**
 * `budget` grown to `rule.share` × `poolTokens`, up to `rule.max`; `budget` itself when the signal
 * or the rule is missing or not a positive finite number (or the rule's top is under `budget`).
 */
export function sizedBudget(budget: number, poolTokens: number, rule: SessionBudget | undefined): number {
  if (!rule || !Number.isFinite(poolTokens) || poolTokens <= 0) return budget;
  if (!Number.isFinite(rule.share) || rule.share <= 0 || !Number.isFinite(rule.max) || rule.max <= budget) return budget;
  return Math.max(budget, Math.min(rule.max, Math.round(rule.share * poolTokens)));
}

/**
 * The signal {@link sizedBudget} reads: the rough tokens (characters / 4, as the packer's first cut
 * counts them) of the session's own candidate lines — its facts, its calls, its memories — not of
 * other sessions' memories, whose number follows the store's size, not the session's. Read from
 * the candidates the packer has anyway: one pass over ~3,500 line lengths at most.
 */
export function sessionPoolTokens(details: readonly Detail[], session: string): number {
  let tokens = 0;
  for (const d of details) if (!d.memory || d.memory.session === session) tokens += Math.ceil((d.line.length + 1) / 4);
  return tokens;
}

export interface ChosenDetail {
  key: string;
  kind: DetailKind;
  factId: string | null;
  memoryId: string | null;
  line: string;
  /** The model's chance that it is needed (whatever ranker packed it). */
  value: number;
}

export interface SessionPack {
  /** The budget the details were packed into (grown with the session's size when asked: {@link SessionPackInput.grow}). */
  budget: number;
  text: string;
  tokens: number;
  sections: Array<{ name: string; tokens: number; ids: string[] }>;
  chosen: ChosenDetail[];
  omitted: Array<{ id: string; reason: 'budget' | 'near-duplicate'; detail?: string }>;
}

type SectionKey = 'rules' | 'left' | 'problems' | 'files' | 'commands' | 'code' | 'other' | 'seen' | 'project';
const SECTIONS: ReadonlyArray<[SectionKey, string]> = [
  ['rules', 'Corrections and rules'],
  ['left', 'Where we left off'],
  ['problems', 'Errors and tests'],
  ['files', 'Files'],
  ['commands', 'Commands'],
  ['code', 'Code'],
  ['other', 'Other details'],
  ['seen', 'Seen only in output, files read and replies'],
  ['project', 'Decisions and project knowledge'],
];

const SECTION_TITLE = new Map(SECTIONS);

function sectionOf(detail: Detail): SectionKey {
  // A detail whose only reason is where it was seen: its section's title says it.
  if (detail.generic && detail.kind !== 'call') return 'seen';
  switch (detail.kind) {
    case 'rule':
      return 'rules';
    case 'continuation':
      return 'left';
    case 'error':
    case 'test':
      return 'problems';
    case 'command':
      return detail.features.failing ? 'problems' : 'commands';
    case 'path':
    case 'pathLine':
      return detail.notFile ? 'other' : 'files';
    case 'symbol':
    case 'call':
      return 'code';
    case 'decision':
    case 'fact':
      return 'project';
    default:
      return 'other';
  }
}

function hash01(text: string, seed: number): number {
  let h = seed ^ 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) / 0xffffffff;
}

/** Rankers that score a detail by something other than the value model (see {@link otherScore}); any other name ranks by the model. */
const OTHER_RANKERS = new Set(['recency', 'random', 'importance']);

/** The score of one of {@link OTHER_RANKERS}. */
function otherScore(detail: Detail, ranker: string, endSeq: number, seed: number): number {
  switch (ranker) {
    case 'recency':
      return detail.lastSeq !== null ? 0.5 + 0.5 * (detail.lastSeq / Math.max(1, endSeq)) : detail.features.thisSession * 0.5 + (detail.memory ? detail.memory.updatedAt / 1e14 : 0);
    case 'random':
      return hash01(detail.key, seed);
    default:
      return detail.memory ? detail.memory.importance : detail.features.frequency;
  }
}

/** Session facts and call facts considered per session (most recent first). */
const MAX_FACTS = 3000;
const MAX_CALL_FACTS = 1500;

/** A memory's staleness note in a session's context: where its line moved, or that its file changed; '' otherwise. */
export function stalenessNote(deps: Deps, memory: Memory, files?: FileReader): string {
  const staleness = stalenessOf(deps, memory, true, files);
  const moved = staleness.files.find((f) => f.status === 'line-moved' && f.movedTo);
  if (moved) return ` (${moved.path}:${moved.line} is now line ${moved.movedTo})`;
  return staleness.reasons.includes('file-changed') ? ' (file changed since — verify)' : '';
}

export interface CandidateOptions {
  /**
   * Leave other sessions' memories unchecked against the workspace (`Detail.checkFiles`): the
   * packer checks only those that come near the budget (`checkFiles` in {@link packSession}).
   * Checking reads and hashes every referenced file, for each of the ~450 project memories a
   * post-compact context considers. @default false
   */
  deferStaleness?: boolean;
  /** What earlier sessions of the project needed after their compactions (learn.ts `learnedDetails`): sets `usedBefore`. */
  learned?: Learned;
}

/** Every candidate of a session with its features (the bench fits the model on these). */
export async function sessionCandidates(
  deps: Deps,
  session: string,
  turns: readonly TurnRecord[],
  memories: readonly Memory[],
  options: CandidateOptions = {},
): Promise<{ details: Detail[]; endSeq: number; task: string }> {
  const activity = activityOf(turns);
  // One pass over the session's fact occurrences (each listing reads them all), most recent first;
  // calls are capped apart: a session that read much code has more of them than of everything else.
  const listed = deps.store.substrate ? await deps.store.substrate.listFacts(session, { limit: MAX_FACTS + MAX_CALL_FACTS }) : [];
  const facts = listed.filter((f) => f.kind !== 'call').slice(0, MAX_FACTS);
  addCallFacts(activity, listed.filter((f) => f.kind === 'call').slice(0, MAX_CALL_FACTS));
  const symbols = new Set(facts.filter((f) => f.kind === 'symbol').map((f) => f.text));
  const root = deps.workspaceRoot;
  const exists = root ? (name: string): boolean => existsSync(join(root, name)) : undefined;
  const listedDetails = [...factDetails(facts, activity, root, exists), ...callDetails(activity, symbols, 1000, root)];
  // Before path variants merge: a merged line keeps the feature if any of its variants had it.
  if (options.learned) markLearned(listedDetails, options.learned);
  const details = mergePathVariants(listedDetails);
  // Where we left off: only this session's latest continuation (older ones are stale).
  const files = new FileReader();
  const continuation = memories.filter((m) => m.kind === 'continuation' && m.session === session).sort((a, b) => b.updatedAt - a.updatedAt)[0];
  for (const memory of memories) {
    if (memory.kind === 'continuation' && memory !== continuation) continue;
    const other = memory.session !== session;
    if (other && options.deferStaleness && memory.files.length > 0) details.push({ ...memoryDetail(memory, session, activity.task, ''), checkFiles: true });
    else details.push(memoryDetail(memory, session, activity.task, other ? stalenessNote(deps, memory, files) : ''));
  }
  return { details, endSeq: activity.endSeq, task: activity.task };
}

/** Candidates given an exact token estimate, in budgets' worth of rough tokens (characters / 4). */
const PREPARE_SLACK = 3;

/**
 * Ties broken by key in UTF-16 code-unit order: the same on every machine (localeCompare followed
 * the user's locale) and ~20× cheaper in a cold process, where ICU collation of ~3,500 keys cost a
 * post-compact hook ~15 ms at 100K memories.
 */
const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const firstSpan = (line: string): string | null => /`([^`]{3,})`/.exec(line)?.[1] ?? null;

/**
 * Whether two term sets are near-duplicates (Jaccard ≥ `threshold`). Jaccard is at most
 * |smaller| / |larger| (shared ≤ |smaller|, union ≥ |larger|), so sets whose sizes alone rule it
 * out are not compared term by term: the same answers, for most pairs without a pass.
 */
function nearDuplicate(a: Set<string>, b: Set<string>, threshold: number): boolean {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  if (large.size === 0 || small.size / large.size < threshold) return false;
  let shared = 0;
  for (const t of small) if (large.has(t)) shared++;
  return shared / (a.size + b.size - shared) >= threshold;
}

/**
 * Lines appended one at a time and searched after each (`includes`), kept as flat chunks of ~4K
 * characters instead of one string: appending to one string and searching it after every append
 * made V8 copy the whole text into a flat string before each search. Packing the 16,000-token
 * context of a 2,200-line session took 12–14 ms of CPU that way and 9–10 with chunks; the 3,906
 * packings of the fidelity suites' cached cuts (1K–16K, three rankers) are byte-identical, in
 * 0.88 of the CPU (docs/BENCHMARKS.md, fidelity). Lines end in a line break, so a needle without
 * one is in the text exactly when it is in one chunk; a needle with one is searched in the whole text.
 */
export class LineText {
  private readonly sealed: string[] = [];
  private tail = '';

  /** Chunks of about this many characters are sealed (searched flat, never copied again). */
  private static readonly CHUNK = 4096;

  /** Append `line`, which ends in a line break. */
  append(line: string): void {
    this.tail += line;
    if (this.tail.length >= LineText.CHUNK) {
      this.sealed.push(this.tail);
      this.tail = '';
    }
  }

  includes(needle: string): boolean {
    if (needle.includes('\n')) return `${this.sealed.join('')}${this.tail}`.includes(needle);
    for (const chunk of this.sealed) if (chunk.includes(needle)) return true;
    return this.tail.includes(needle);
  }
}

export interface PackOptions {
  budget: number;
  ranker: string;
  seed: number;
  model?: ValueModel;
  endSeq: number;
  /** Text already in the agent's context window (the compaction summary): a line whose detail it holds verbatim is left out. */
  inContext?: string;
  /**
   * Called on each candidate that passes the cut by rough tokens, before its exact count: what a
   * deferred check adds to the line (a memory's staleness note, see {@link CandidateOptions}).
   */
  prepare?: (detail: Detail) => Detail;
}

/**
 * Rank candidates and pack them into `budget` tokens (pure: the bench replays it on stored
 * candidates). Greedy by score per token; a line whose detail a chosen line already carries
 * verbatim is skipped, and so is a memory too similar to a chosen one.
 */
export function packDetails(details: readonly Detail[], options: PackOptions): SessionPack {
  const { text, sections, chosen, omitted } = packLines(details, options);
  return { budget: options.budget, text, tokens: estimateTokens(text), sections, chosen, omitted };
}

/**
 * {@link packDetails} without counting the packed text's tokens: for a caller that counts a larger
 * text holding it anyway (the context builder, src/context/build.ts), one pass less over it.
 */
export function packLines(details: readonly Detail[], options: PackOptions): Omit<SessionPack, 'tokens' | 'budget'> {
  const model = options.model ?? DEFAULT_VALUE_MODEL;
  const inContext = options.inContext ?? '';
  // The value model's chance of each candidate: the composite ranker's score, and what every
  // chosen line carries. Computed once a candidate (a prepared detail keeps its features).
  const byModel = !OTHER_RANKERS.has(options.ranker);
  // Token estimates only for what could fit: candidates by score per rough token (characters / 4),
  // until PREPARE_SLACK budgets' worth; the rest are left out for budget unestimated. A session has
  // up to ~3,500 candidates and its hook was spending a quarter of its context time estimating them.
  const rough = details
    .map((d) => {
      const value = byModel ? valueOf(model, d.features) : null;
      const score = value ?? otherScore(d, options.ranker, options.endSeq, options.seed);
      return { d, value, score: score + (d.memory?.pinned ? 10 : 0), rough: Math.ceil((d.line.length + 1) / 4) };
    })
    .sort((a, b) => b.score / b.rough - a.score / a.rough || b.score - a.score || byKey(a.d.key, b.d.key));
  const omitted: SessionPack['omitted'] = [];
  let roughSum = 0;
  const scored = [];
  for (const item of rough) {
    if (roughSum >= options.budget * PREPARE_SLACK && !item.d.memory?.pinned) {
      omitted.push({ id: item.d.key, reason: 'budget' });
      continue;
    }
    roughSum += item.rough;
    const d = options.prepare ? options.prepare(item.d) : item.d;
    // A grouped call costs its item on the shared line, plus the line's head for the first of its group.
    const group = d.group ? { item: estimateTokens(`${d.group.item}, `), head: estimateTokens(`${d.group.head}\n`) } : null;
    scored.push({ d, tokens: estimateTokens(`${d.line}\n`), group, score: item.score, value: item.value !== null && d.features === item.d.features ? item.value : valueOf(model, d.features) });
  }
  // The order is by value per token of each line on its own: a call's shared line only makes it
  // cheaper, so what it saves goes to the next candidates and never ahead of better ones.
  scored.sort((a, b) => b.score / b.tokens - a.score / a.tokens || b.score - a.score || byKey(a.d.key, b.d.key));

  const chosen = new Map<SectionKey, typeof scored>();
  // The chosen lines' text, one a line: a detail's span never holds a line break, so it is found in
  // here exactly when some chosen line holds it (one search instead of one per chosen line).
  const chosenText = new LineText();
  const memoryTerms: Array<{ id: string; terms: Set<string> }> = [];
  let used = 0;
  // A section header's tokens, counted once per section (a session has thousands of candidates).
  const headers = new Map<SectionKey, number>();
  const headerTokens = (key: SectionKey): number => {
    let tokens = headers.get(key);
    if (tokens === undefined) headers.set(key, (tokens = estimateTokens(`\n## ${SECTION_TITLE.get(key) ?? ''}\n`)));
    return tokens;
  };
  // Per section: its lines' and header's tokens, as the packer counted them (as the context without a session history counts its sections).
  const sectionTokens = new Map<SectionKey, number>();
  // Shared call lines opened so far (their heads are paid).
  const openGroups = new Set<string>();
  for (const item of scored) {
    const key = sectionOf(item.d);
    const headerCost = chosen.has(key) ? 0 : headerTokens(key);
    const group = item.d.group;
    const cost = group && item.group ? item.group.item + (openGroups.has(group.key) ? 0 : item.group.head) : item.tokens;
    if (used + cost + headerCost > options.budget) {
      omitted.push({ id: item.d.key, reason: 'budget' });
      continue;
    }
    // Carried already: a chosen line, or the summary in the context window, holds this one's detail verbatim.
    const span = item.d.memory ? null : firstSpan(item.d.line);
    if (span && inContext.length > 0 && inContext.includes(span)) {
      omitted.push({ id: item.d.key, reason: 'near-duplicate', detail: 'compaction summary' });
      continue;
    }
    if (span && chosenText.includes(span)) {
      omitted.push({ id: item.d.key, reason: 'near-duplicate' });
      continue;
    }
    if (item.d.memory) {
      const terms = new Set(indexTerms(item.d.memory.text));
      const dup = memoryTerms.find((o) => nearDuplicate(terms, o.terms, 0.6));
      if (dup) {
        omitted.push({ id: item.d.key, reason: 'near-duplicate', detail: dup.id });
        continue;
      }
      memoryTerms.push({ id: item.d.key, terms });
    }
    const list = chosen.get(key) ?? [];
    list.push(item);
    chosen.set(key, list);
    chosenText.append(`${group ? group.item : item.d.line}\n`);
    if (group) openGroups.add(group.key);
    used += cost + headerCost;
    sectionTokens.set(key, (sectionTokens.get(key) ?? 0) + cost + headerCost);
  }

  const parts: string[] = [];
  const sections: SessionPack['sections'] = [];
  const picked: ChosenDetail[] = [];
  for (const [key, title] of SECTIONS) {
    const items = chosen.get(key);
    if (!items || items.length === 0) continue;
    // Within a section, the most valuable first.
    items.sort((a, b) => b.value - a.value || byKey(a.d.key, b.d.key));
    const block = `\n## ${title}\n${linesOf(items.map((i) => i.d)).join('\n')}\n`;
    parts.push(block);
    sections.push({ name: key, tokens: sectionTokens.get(key) ?? 0, ids: items.filter((i) => i.d.memory).map((i) => i.d.key) });
    for (const i of items) picked.push({ key: i.d.key, kind: i.d.kind, factId: i.d.factId, memoryId: i.d.memory?.id ?? null, line: i.d.line, value: Math.round(i.value * 1000) / 1000 });
  }
  return { text: parts.join(''), sections, chosen: picked, omitted };
}

/**
 * The lines of a section's chosen details, in their order: a grouped call's shared line stands
 * where its first call would, holding every chosen call of its group in order.
 */
function linesOf(details: readonly Detail[]): string[] {
  const members = new Map<string, string[]>();
  for (const d of details) {
    if (!d.group) continue;
    const items = members.get(d.group.key);
    if (items) items.push(d.group.item);
    else members.set(d.group.key, [d.group.item]);
  }
  const lines: string[] = [];
  for (const d of details) {
    if (!d.group) lines.push(d.line);
    else if (members.has(d.group.key)) {
      lines.push(`${d.group.head}${(members.get(d.group.key) as string[]).join(', ')}`);
      members.delete(d.group.key);
    }
  }
  return lines;
}

/** Rank a session's candidates and pack them into `budget` tokens (the packed text's tokens not counted: see {@link packLines}). */
export async function packSession(deps: Deps, input: SessionPackInput): Promise<Omit<SessionPack, 'tokens'>> {
  const candidates = await sessionCandidates(deps, input.session, input.turns, input.memories, { deferStaleness: true, ...(input.learned ? { learned: input.learned } : {}) });
  const { endSeq } = candidates;
  const exclude = input.exclude;
  const details = exclude && exclude.size > 0 ? candidates.details.filter((d) => !(d.factId && exclude.has(d.factId)) && !(d.memory && exclude.has(d.memory.id))) : candidates.details;
  // Sized to the session (after /compact): the rule's total, less what the context spent before the details.
  const budget = input.grow ? Math.max(input.budget, sizedBudget(input.budget + input.grow.spent, sessionPoolTokens(details, input.session), input.grow) - input.grow.spent) : input.budget;
  // A memory near the budget gets its staleness note now (the cut by rough tokens saw it without).
  const files = new FileReader();
  const prepare = (d: Detail): Detail => {
    if (!d.checkFiles || !d.memory) return d;
    const note = stalenessNote(deps, d.memory, files);
    return { ...d, line: note.length > 0 ? memoryLine(d.memory, note) : d.line, checkFiles: false };
  };
  return { budget, ...packLines(details, { budget, ranker: input.ranker, seed: input.seed, endSeq, prepare, ...(input.model ? { model: input.model } : {}), ...(input.inContext ? { inContext: input.inContext } : {}) }) };
}
