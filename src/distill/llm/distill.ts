/**
 * The optional LLM distiller, run after the heuristics (`cairn distill --llm`), never by default.
 *
 * - observer: the session's turns since the LLM cursor → scoped facts (a fact without a scope is
 *   dropped), each down the same quality gate and ladder as a heuristic candidate;
 * - judge: a fact close to stored memories (but not a near-duplicate, which merges without a call)
 *   gets an ADD / UPDATE / DELETE / NOOP decision — UPDATE revises (history kept), DELETE forgets
 *   (restorable);
 * - reflector: once the LLM-made memories of a project pass a token threshold, clusters of
 *   overlapping ones are consolidated into one (the others forgotten, restorable).
 *
 * Every call is checked against a hard token budget per day and per session first. A timeout, a
 * 429, a refusal or a malformed answer changes nothing: the observer's cursor stays put (the
 * turns are read again next time), a judge that fails falls back to the heuristic ladder, and
 * after the first provider failure the run stops calling it.
 */
import type { Deps } from '../../deps.js';
import { forget, revise } from '../../memory/lifecycle.js';
import { KIND_IMPORTANCE } from '../../memory/normalize.js';
import type { Memory, SessionRecord } from '../../types.js';
import { gateReason } from '../gate.js';
import { applyCandidate, existingDir, nearest, type LadderContext } from '../ladder.js';
import { SessionView } from '../session.js';
import { NEAR_DUPLICATE_JACCARD, jaccard, lshPairs, minhash, shingles } from '../similarity.js';
import type { Candidate, Outcome } from '../types.js';
import { estimateTokens } from '../../tokens.js';
import { DEFAULT_BUDGET, overBudget, recordSpend, type LlmBudget } from './budget.js';
import { parseConsolidation, parseJudgment, parseObservations } from './parse.js';
import { JUDGE_SYSTEM, OBSERVER_SYSTEM, REFLECTOR_SYSTEM, judgePrompt, observerPrompt, reflectorPrompt, renderTranscript } from './prompts.js';
import { LlmError, type LlmProvider, type LlmRequest, type LlmResponse } from './types.js';

export interface LlmDistillOptions {
  provider: LlmProvider;
  /** @default {@link DEFAULT_BUDGET} */
  budget?: LlmBudget;
  /** Only these sessions. @default every session with turns the LLM has not read */
  sessionIds?: string[];
  /** Most transcript characters sent per session per run (the most recent kept). @default 24000 */
  maxTranscriptChars?: number;
  /** Facts asked for per session. @default 12 */
  maxFacts?: number;
  /** Tokens of LLM-made memories in a project past which the reflector runs. @default 1500 */
  reflectThresholdTokens?: number;
}

export interface LlmDistillSummary {
  provider: string;
  model: string;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  sessions: number;
  /** Facts the observer proposed (valid ones). */
  observed: number;
  /** Items of an answer that did not fit the schema (dropped). */
  invalid: number;
  added: number;
  merged: number;
  updated: number;
  deleted: number;
  noop: number;
  rejected: number;
  /** Candidates decided by the heuristic ladder because the judge could not answer. */
  fallback: number;
  /** Memories written by the reflector (each replacing a cluster). */
  consolidated: number;
  failures: Array<{ sessionId: string | null; kind: string; message: string }>;
  /** Why the run stopped early (budget reached, provider failing), or null. */
  stopped: string | null;
}

export const llmCursorKey = (sessionId: string): string => `distill:llm-cursor:${sessionId}`;

/** Below this similarity a stored memory is not worth showing the judge. */
const JUDGE_MIN_SIMILARITY = 0.2;

class Budgeted {
  stopped: string | null = null;
  constructor(
    private readonly deps: Deps,
    private readonly provider: LlmProvider,
    private readonly budget: LlmBudget,
    private readonly summary: LlmDistillSummary,
  ) {}

  /** One call, refused when over budget; usage recorded. Throws LlmError. */
  async call(sessionId: string | null, request: LlmRequest): Promise<LlmResponse> {
    if (this.stopped) throw new LlmError('budget', this.stopped);
    const estimate = estimateTokens(request.system) + estimateTokens(request.prompt) + request.maxTokens;
    const refused = await overBudget(this.deps, this.budget, this.deps.clock.now(), sessionId, estimate);
    if (refused) {
      // The daily budget stops the run; a session's only stops that session.
      if (refused.startsWith('daily')) this.stopped = refused;
      throw new LlmError('budget', refused);
    }
    let response: LlmResponse;
    try {
      response = await this.provider.complete(request);
    } catch (error) {
      const failure = error instanceof LlmError ? error : new LlmError('http', error instanceof Error ? error.message : String(error), { cause: error });
      if (failure.kind !== 'malformed') this.stopped = `${this.provider.name} failed (${failure.kind}): ${failure.message}`;
      throw failure;
    }
    this.summary.calls++;
    this.summary.inputTokens += response.inputTokens;
    this.summary.outputTokens += response.outputTokens;
    await recordSpend(this.deps, this.deps.clock.now(), sessionId, response);
    return response;
  }
}

function emptyLlmSummary(provider: LlmProvider): LlmDistillSummary {
  return {
    provider: provider.name,
    model: provider.model,
    calls: 0,
    inputTokens: 0,
    outputTokens: 0,
    sessions: 0,
    observed: 0,
    invalid: 0,
    added: 0,
    merged: 0,
    updated: 0,
    deleted: 0,
    noop: 0,
    rejected: 0,
    fallback: 0,
    consolidated: 0,
    failures: [],
    stopped: null,
  };
}

function count(summary: LlmDistillSummary, outcome: Outcome): void {
  if (outcome.action === 'added' || outcome.action === 'queued' || outcome.action === 'superseded') summary.added++;
  else if (outcome.action === 'merged') summary.merged++;
  else if (outcome.action === 'rejected') summary.rejected++;
}

async function readCursor(deps: Deps, sessionId: string): Promise<number> {
  const raw = await deps.store.getState(llmCursorKey(sessionId));
  const n = raw === null ? Number.NaN : Number(raw);
  return Number.isInteger(n) ? n : -1;
}

/** Judge one candidate against its closest memories and act on the answer. */
async function judgeAndApply(ctx: LadderContext, llm: Budgeted, summary: LlmDistillSummary, candidate: Candidate): Promise<void> {
  const { deps } = ctx;
  if (gateReason(candidate) !== null) {
    summary.rejected++;
    return;
  }
  const project = candidate.scope === 'user' ? null : ctx.project;
  const near = (await nearest(ctx, { text: candidate.text, project })).filter((n) => n.similarity >= JUDGE_MIN_SIMILARITY).slice(0, 5);
  // Nothing close, or a near-duplicate: the ladder decides without a call.
  if (near.length === 0 || (near[0] as { similarity: number }).similarity >= NEAR_DUPLICATE_JACCARD || llm.stopped) {
    if (llm.stopped && near.length > 0) summary.fallback++;
    count(summary, await applyCandidate(ctx, candidate));
    return;
  }
  let judgment;
  try {
    const response = await llm.call(ctx.sessionId, { system: JUDGE_SYSTEM, prompt: judgePrompt(candidate.text, near.map((n) => ({ id: n.memory.id, text: n.memory.text }))), maxTokens: 400 });
    judgment = parseJudgment(response.text);
  } catch (error) {
    summary.failures.push({ sessionId: ctx.sessionId, kind: error instanceof LlmError ? error.kind : 'http', message: error instanceof Error ? error.message : String(error) });
    summary.fallback++;
    count(summary, await applyCandidate(ctx, candidate));
    return;
  }
  const target: Memory | undefined = judgment.id !== undefined ? near.find((n) => n.memory.id === judgment.id)?.memory : undefined;
  switch (judgment.action) {
    case 'NOOP':
      summary.noop++;
      return;
    case 'UPDATE':
      if (target && target.validTo === null && target.deletedAt === null) {
        await revise({ ...deps, actor: `${deps.actor}:llm` }, target.id, judgment.text ?? candidate.text);
        summary.updated++;
        return;
      }
      break;
    case 'DELETE':
      if (target && target.deletedAt === null && target.validTo === null) {
        await forget({ ...deps, actor: `${deps.actor}:llm` }, [target.id], `llm judge: contradicted by “${candidate.text.slice(0, 120)}”`);
        summary.deleted++;
      }
      break;
    default:
      break;
  }
  // ADD, or an UPDATE / DELETE naming a memory it was not shown: the ladder stores it.
  if (judgment.action !== 'ADD' && !target) summary.fallback++;
  count(summary, await applyCandidate(ctx, candidate));
}

async function observeSession(deps: Deps, llm: Budgeted, options: LlmDistillOptions, summary: LlmDistillSummary, session: SessionRecord): Promise<void> {
  const substrate = deps.store.substrate;
  if (!substrate) return;
  const cursor = await readCursor(deps, session.id);
  const turns = await substrate.getTurns(session.id, { fromSeq: cursor + 1 });
  if (turns.length === 0) return;
  summary.sessions++;
  const view = new SessionView(session, turns, cursor + 1, await substrate.getCorrections({ sessionId: session.id }));
  const transcript = renderTranscript(view, options.maxTranscriptChars ?? 24_000);
  const last = turns[turns.length - 1] as (typeof turns)[number];
  if (transcript.length > 0) {
    const response = await llm.call(session.id, { system: OBSERVER_SYSTEM, prompt: observerPrompt(transcript, options.maxFacts ?? 12), maxTokens: 1500 });
    const { observations, invalid } = parseObservations(response.text);
    summary.observed += observations.length;
    summary.invalid += invalid;
    const ctx: LadderContext = { deps, project: session.project, sessionId: session.id, workspaceRoot: existingDir(session.cwd), dryRun: false };
    for (const o of observations) {
      const candidate: Candidate = {
        text: o.text,
        kind: o.kind === 'continuation' ? 'note' : o.kind,
        scope: o.scope,
        tags: ['llm', ...(o.tags ?? [])].slice(0, 8),
        importance: KIND_IMPORTANCE[o.kind],
        provenance: view.provenance(last),
        files: [],
        subject: null,
        extractor: 'llm',
        at: last.at,
        seq: last.seq,
      };
      await judgeAndApply(ctx, llm, summary, candidate);
    }
  }
  // Only a session read through to the end moves on.
  await deps.store.setState(llmCursorKey(session.id), String(last.seq));
}

/** Clusters of overlapping LLM-made memories in a project, each merged into one by the model. */
async function reflect(deps: Deps, llm: Budgeted, options: LlmDistillOptions, summary: LlmDistillSummary, project: string | null): Promise<void> {
  const memories = (await deps.store.listMemories({ ...(project === null ? { project: null } : { project, includeUserScope: false }), sources: ['distill'], limit: 5000 })).filter(
    (m) => m.meta.extractor === 'llm' && m.kind !== 'continuation',
  );
  const tokens = memories.reduce((n, m) => n + estimateTokens(m.text), 0);
  if (tokens < (options.reflectThresholdTokens ?? 1500)) return;
  const sets = memories.map((m) => shingles(m.text));
  const parent = memories.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i] as number)));
  for (const [i, j] of lshPairs(sets.map((s) => minhash(s)), 32)) {
    if (memories[i]?.kind === memories[j]?.kind && jaccard(sets[i] as Set<string>, sets[j] as Set<string>) >= 0.3) parent[find(i)] = find(j);
  }
  const clusters = new Map<number, Memory[]>();
  memories.forEach((m, i) => {
    const root = find(i);
    const list = clusters.get(root);
    if (list) list.push(m);
    else clusters.set(root, [m]);
  });
  for (const cluster of [...clusters.values()].filter((c) => c.length >= 3).slice(0, 3)) {
    if (llm.stopped) return;
    let consolidated;
    try {
      const response = await llm.call(null, { system: REFLECTOR_SYSTEM, prompt: reflectorPrompt(cluster.map((m) => ({ id: m.id, text: m.text }))), maxTokens: 800 });
      consolidated = parseConsolidation(response.text);
    } catch (error) {
      summary.failures.push({ sessionId: null, kind: error instanceof LlmError ? error.kind : 'http', message: error instanceof Error ? error.message : String(error) });
      continue;
    }
    const keep = [...cluster].sort((a, b) => b.importance - a.importance)[0] as Memory;
    const actor = { ...deps, actor: `${deps.actor}:llm` };
    const revised = await revise(actor, keep.id, consolidated.text, { ...(consolidated.kind && consolidated.kind !== 'continuation' ? { kind: consolidated.kind } : {}) });
    const others = cluster.filter((m) => m.id !== keep.id).map((m) => m.id);
    if (others.length > 0) await forget(actor, others, `llm reflector: consolidated into ${revised.memory.id}`);
    summary.consolidated++;
  }
}

/** Run the observer (and judge) over sessions with unread turns, then the reflector. */
export async function distillWithLlm(deps: Deps, options: LlmDistillOptions): Promise<LlmDistillSummary> {
  const summary = emptyLlmSummary(options.provider);
  const llm = new Budgeted(deps, options.provider, options.budget ?? DEFAULT_BUDGET, summary);
  const substrate = deps.store.substrate;
  if (!substrate) return summary;
  const ids: string[] = [];
  if (options.sessionIds) ids.push(...options.sessionIds);
  else {
    for (let offset = 0; ; offset += 500) {
      const page = await substrate.listSessions({ limit: 500, offset });
      for (const s of page) {
        const next = await substrate.getTurns(s.id, { fromSeq: (await readCursor(deps, s.id)) + 1, limit: 1 });
        if (next.length > 0) ids.push(s.id);
      }
      if (page.length < 500) break;
    }
  }
  const projects = new Set<string | null>();
  for (const id of ids) {
    if (llm.stopped) break;
    const session = await substrate.getSession(id);
    if (!session) continue;
    try {
      await observeSession(deps, llm, options, summary, session);
      projects.add(session.project);
    } catch (error) {
      summary.failures.push({ sessionId: id, kind: error instanceof LlmError ? error.kind : 'internal', message: error instanceof Error ? error.message : String(error) });
      if (!(error instanceof LlmError)) deps.logger.error('llm distill: session failed', { sessionId: id, error: String(error) });
    }
  }
  if (projects.size > 0) projects.add(null);
  for (const project of projects) {
    if (llm.stopped) break;
    await reflect(deps, llm, options, summary, project);
  }
  summary.stopped = llm.stopped;
  return summary;
}
