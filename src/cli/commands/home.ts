/**
 * `cairn` with no command: where the memories are, which agents are wired, the embedder, the
 * last ingest — then the three commands most worth running next. Fast: it opens the store
 * without loading the embedder.
 */
import { homedir } from 'node:os';
import type { Command } from 'commander';
import { openCairn } from '../../config.js';
import { defaultTranscriptRoots } from '../../ingest/index.js';
import { memorySpread, type MemorySpread } from '../../memory/spread.js';
import { bytes, when } from '../format.js';
import { agentWiring, isWired, type AgentWiring } from '../wired.js';
import { listCommand } from '../where.js';
import type { Run } from './memory.js';

export interface NextStep {
  command: string;
  why: string;
}

export interface HomeFacts {
  spread: MemorySpread;
  active: number;
  sessions: number;
  lastIngestAt: number | null;
  transcriptRoots: string[];
  agents: AgentWiring[];
  openReview: number;
}

const n = (value: number): string => value.toLocaleString('en-US');

/** The most useful next commands for this state, best first. */
export function nextSteps(facts: HomeFacts, max = 3): NextStep[] {
  const steps: NextStep[] = [];
  const { spread } = facts;
  if (facts.sessions === 0 && facts.transcriptRoots.length > 0) steps.push({ command: 'cairn ingest', why: `read your agents' transcripts (${facts.transcriptRoots.join(', ')}) into memories` });
  for (const agent of facts.agents) {
    const missing = agent.agent === 'claude' ? !agent.hooks : !agent.mcp;
    if (agent.present && missing) steps.push({ command: `cairn install ${agent.agent}`, why: `give ${agent.label} its memories at session start and after /compact` });
  }
  if (spread.here === 0 && spread.otherTotal + spread.noProject > 0) {
    const top = spread.others[0];
    steps.push(top ? { command: listCommand(top.project), why: `the ${n(top.memories)} memories of ${top.project}, where most are` } : { command: 'cairn list --all-projects', why: 'the memories of every project' });
  }
  if (facts.active === 0 && facts.transcriptRoots.length === 0) steps.push({ command: 'cairn remember "what to keep" --kind fact', why: 'store a first memory by hand' });
  // Here holds nothing but the user-wide memories while other projects hold plenty: browsing them beats searching here.
  if (spread.here > 0 || (spread.userWide > 0 && spread.otherTotal + spread.noProject === 0)) steps.push({ command: 'cairn recall "what you are working on"', why: 'search this project’s memories, each hit with why it ranked' });
  if (facts.openReview > 0) steps.push({ command: 'cairn ui', why: `${n(facts.openReview)} near-duplicates, contradictions or stale memories wait for review` });
  else if (facts.active > 0) steps.push({ command: 'cairn ui', why: 'browse, search and review memories in your browser' });
  if (facts.sessions > 0 && facts.active > 0) steps.push({ command: 'cairn ingest', why: 'read what your agents did since the last ingest' });
  steps.push({ command: 'cairn --help', why: 'every command' });
  const seen = new Set<string>();
  return steps.filter((s) => !seen.has(s.command) && seen.add(s.command)).slice(0, max);
}

/** Register the action `cairn` runs without a command (call after every command is registered). */
export function registerHomeAction(program: Command, run: Run): void {
  // With an action of its own, commander would take an unknown command for an argument: give it
  // room, then answer such a word as the unknown command it is.
  program.allowExcessArguments(true);
  run(program, async (ctx) => {
    const extra = program.args[0];
    if (extra !== undefined) (program as unknown as { unknownCommand(): never }).unknownCommand();
    const { cairn } = await openCairn(ctx.config, { cwd: ctx.io.cwd, actor: 'cli' });
    try {
      const deps = cairn.deps;
      const home = ctx.io.env.HOME ?? homedir();
      const [stats, spread, substrate, lastIngest, openReview] = await Promise.all([
        deps.store.stats(),
        memorySpread(deps),
        deps.store.substrate?.substrateStats() ?? Promise.resolve(null),
        deps.store.getState('last_ingest_at'),
        deps.store.countReview({ open: true }),
      ]);
      const facts: HomeFacts = {
        spread,
        active: stats.active,
        sessions: substrate?.sessions ?? 0,
        lastIngestAt: lastIngest ? Number(lastIngest) : null,
        transcriptRoots: defaultTranscriptRoots(ctx.io.env, home),
        agents: agentWiring(ctx.io.env, home, deps.workspaceRoot ?? ctx.io.cwd),
        openReview,
      };
      const next = nextSteps(facts);
      const wired = facts.agents.filter(isWired);
      const unwired = facts.agents.filter((a) => !isWired(a));
      if (ctx.json) {
        return ctx.printJson({
          store: { name: deps.store.name, location: deps.store.location, sizeBytes: stats.sizeBytes },
          home: ctx.config.home,
          memories: { active: stats.active, ...spread },
          sessions: facts.sessions,
          lastIngestAt: facts.lastIngestAt,
          agents: facts.agents,
          embedder: ctx.config.embedder,
          vectors: stats.vectors,
          openReview,
          next,
        });
      }
      ctx.out('cairn — long-term memory for AI coding agents');
      ctx.out('');
      ctx.out(`store      ${deps.store.location} (${deps.store.name}, ${bytes(stats.sizeBytes)})`);
      const where = [
        `${n(spread.here)} in this project (${spread.project ?? 'none'})`,
        spread.userWide > 0 ? `${n(spread.userWide)} user-wide` : '',
        spread.otherTotal > 0 ? `${n(spread.otherTotal)} in ${spread.otherProjects > 0 ? `${n(spread.otherProjects)} other project${spread.otherProjects === 1 ? '' : 's'}` : 'other projects'}` : '',
        spread.noProject > 0 ? `${n(spread.noProject)} without a project` : '',
      ].filter(Boolean);
      ctx.out(`memories   ${n(stats.active)} active: ${where.join(' · ')}`);
      ctx.out(`sessions   ${n(facts.sessions)} ingested · last ingest ${facts.lastIngestAt ? when(facts.lastIngestAt) : 'never'}`);
      const parts = (a: AgentWiring): string => (a.agent === 'claude' && !a.hooks ? 'MCP only, no hooks' : [a.hooks ? 'hooks' : '', a.mcp ? 'MCP' : ''].filter(Boolean).join(' + '));
      const wiredText = wired.map((a) => `${a.label} (${parts(a)})`).join(', ');
      ctx.out(`agents     ${wired.length > 0 ? `wired: ${wiredText}` : 'none wired'}${unwired.length > 0 ? ` · not wired: ${unwired.map((a) => a.label).join(', ')}` : ''}`);
      ctx.out(`embedder   ${ctx.config.embedder ? `${ctx.config.embedder} · ${n(stats.vectors)} vectors · recall: hybrid` : 'none configured · recall runs on BM25 (full-text)'}`);
      ctx.out('');
      ctx.out('next:');
      // Descriptions line up after the short commands; a long one (a deep project path) just gets its gap.
      const width = Math.max(0, ...next.map((s) => s.command.length).filter((len) => len <= 40));
      for (const step of next) ctx.out(`  ${step.command.padEnd(width)}   ${step.why}`);
    } finally {
      await cairn.close();
    }
  });
}
