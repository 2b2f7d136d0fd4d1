import type { Command } from 'commander';
import { startBackgroundFill } from '../fill.js';
import { invalid } from '../../errors.js';
import type { Priority } from '../../memory/normalize.js';
import type { Cairn } from '../../cairn.js';
import { memorySpread, type MemorySpread } from '../../memory/spread.js';
import type { RecallHit, RecallInput } from '../../recall/recall.js';
import type { Kind, ListOptions, Scope } from '../../types.js';
import type { CommandContext } from '../context.js';
import { day, memoryLine, recallHitLines, similarLines, when } from '../format.js';
import { elsewhereLine, shellArg } from '../where.js';

export type Run = (command: Command, handler: (ctx: CommandContext, ...args: never[]) => Promise<void>) => void;

export const list = (value: string, previous: string[] = []): string[] => [
  ...previous,
  ...value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

export function positiveInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw invalid(`${name} must be a positive integer (got "${value}")`, name);
    return n;
  };
}

function importance(value: string): number {
  const n = Number(value);
  if (!(n >= 0 && n <= 1)) throw invalid(`--importance must be a number from 0 to 1 (got "${value}")`, 'importance');
  return n;
}

export function registerMemoryCommands(program: Command, run: Run): void {
  run(
    program
      .command('remember')
      .summary('store one memory')
      .description(
        'Store one memory (a finding, decision, preference, correction …). Secrets are redacted and <private> spans dropped first.\n' +
          'Prints the new id, or the existing one when the same text is already stored, and any similar memories.',
      )
      .argument('<text...>', 'the memory text (quote it)')
      .option('-k, --kind <kind>', 'fact | decision | preference | procedure | correction | entity | continuation | note', 'note')
      .option('-t, --tags <tags>', 'comma-separated tags', list)
      .option('-p, --priority <priority>', 'high | medium | low (sets importance 0.9 / 0.6 / 0.3)')
      .option('--importance <n>', 'importance from 0 to 1 (overrides --priority)', importance)
      .option('-s, --scope <scope>', 'session | project | user (default: project inside a project, else user)')
      .option('-f, --file <path[:line]>', 'a file this memory is about (repeatable)', (v: string, p: string[] = []) => [...p, v])
      .option('--supersedes <id>', 'replace this memory (it is kept as an older version)')
      .option('--context <text>', 'what this answers (the question or request it replies to): searched with the text, never shown as the memory')
      .option('--pin', 'always recall first')
      .addHelpText('after', '\nExamples:\n  cairn remember "acquire_lock() must run before touching workspace metadata (watcher race)" --kind fact --file src/ws.rs:214\n  cairn remember "use pnpm, never npm" --kind preference --scope user'),
    async (ctx, words: string[], opts: { kind: Kind; tags?: string[]; priority?: Priority; importance?: number; scope?: Scope; file?: string[]; supersedes?: string; context?: string; pin?: boolean }) => {
      const cairn = await ctx.cairn();
      const result = await cairn.remember({
        text: words.join(' '),
        kind: opts.kind,
        ...(opts.tags ? { tags: opts.tags } : {}),
        ...(opts.priority ? { priority: opts.priority } : {}),
        ...(opts.importance !== undefined ? { importance: opts.importance } : {}),
        ...(opts.scope ? { scope: opts.scope } : {}),
        ...(opts.file ? { files: opts.file } : {}),
        ...(opts.supersedes ? { supersedes: opts.supersedes } : {}),
        ...(opts.context !== undefined ? { context: opts.context } : {}),
        ...(opts.pin ? { pinned: true } : {}),
      });
      // Written without a vector (this process never loads the model): a detached fill embeds it.
      if (result.created) await startBackgroundFill(ctx.config, ctx.io.env, cairn.deps.store);
      if (ctx.json) return ctx.printJson(result);
      ctx.out(result.created ? `remembered ${result.memory.id}` : `already stored as ${result.memory.id} (no new memory)`);
      const redacted = Object.entries(result.redacted);
      if (redacted.length > 0) ctx.note(`redacted: ${redacted.map(([k, n]) => `${n}× ${k}`).join(', ')}`);
      for (const line of similarLines(result.similar)) ctx.out(line);
    },
  );

  run(
    program
      .command('recall')
      .summary('search memories, ranked, with why')
      .description('Hybrid recall (BM25 + vectors, fused by reciprocal rank, then the composite score). Each hit shows why it ranked and whether it is stale.')
      .argument('<query...>', 'what to look for')
      .option('-n, --k <n>', 'number of results', positiveInt('k'), 10)
      .option('-t, --tags <tags>', 'only memories with any of these tags (each match also boosts +10%)', list)
      .option('--kind <kinds>', 'only these kinds (comma-separated)', list)
      .option('--scope <scopes>', 'only these scopes (comma-separated)', list)
      .option('--project <id>', 'search this project instead of the current one')
      .option('--no-project', 'search the memories without a project (and the user-wide ones)')
      .option('--all-projects', 'search every project')
      .option('--as-of <snapshot>', 'recall over the memories sealed in a snapshot')
      .option('--no-touch', 'do not count this as an access')
      .option('--rerank', 'also compute the word-level signatures of first hits that have none yet (one model run each)')
      .option('--no-rerank', 'keep recall\'s own order: do not compare the first 10 hits with the query word by word (on by default with an onnx: embedder)'),
    async (
      ctx,
      words: string[],
      opts: { k: number; tags?: string[]; kind?: Kind[]; scope?: Scope[]; project?: string | false; allProjects?: boolean; asOf?: string; touch: boolean; rerank?: boolean },
    ) => {
      const cairn = await ctx.cairn();
      const input: RecallInput = {
        query: words.join(' '),
        k: opts.k,
        ...(opts.tags ? { tags: opts.tags } : {}),
        ...(opts.kind ? { kinds: opts.kind } : {}),
        ...(opts.scope ? { scopes: opts.scope } : {}),
        ...(typeof opts.project === 'string' ? { project: opts.project } : opts.project === false ? { project: null } : {}),
        ...(opts.allProjects ? { allProjects: true } : {}),
        ...(opts.asOf ? { asOf: opts.asOf } : {}),
        ...(opts.rerank !== undefined ? { rerank: opts.rerank } : {}),
        touch: opts.touch,
      };
      const result = await cairn.recall(input);
      const searched = input.project !== undefined ? input.project : cairn.deps.project;
      const elsewhere = opts.allProjects ? null : await matchesElsewhere(cairn, input, searched, result.hits);
      const command = `cairn recall ${words.map(shellArg).join(' ')} --all-projects`;
      if (ctx.json) return ctx.printJson(elsewhere === null ? result : { ...result, elsewhere: { matches: elsewhere.matches, more: elsewhere.more, command } });
      const inOthers = elsewhere && elsewhere.matches > 0 ? `${elsewhere.matches}${elsewhere.more ? '+' : ''} match${elsewhere.matches === 1 && !elsewhere.more ? '' : 'es'} in other projects` : null;
      if (result.hits.length === 0) {
        const where = opts.allProjects ? '' : ` in ${searched === null ? 'the memories without a project' : `this project (${searched})`}`;
        ctx.out(`no memories match "${result.query}"${where}${inOthers ? `; ${inOthers}: ${command}` : ''}`);
        return;
      }
      result.hits.forEach((hit, i) => {
        for (const line of recallHitLines(hit, i + 1)) ctx.out(line);
      });
      const rerankNote =
        result.reranked === undefined ? '' : result.reranked ? ` · reranked${result.rerankNote ? ` (${result.rerankNote})` : ''}` : ` · not reranked${result.rerankNote ? ` (${result.rerankNote})` : ''}`;
      ctx.note(`${result.hits.length} of ${result.considered} candidates · mode ${result.mode}${rerankNote}${inOthers ? ` · ${inOthers} (add --all-projects)` : ''}`);
    },
  );

  run(
    program
      .command('forget')
      .summary('soft-delete memories (undo with restore)')
      .argument('<ids...>', 'memory ids')
      .option('-r, --reason <reason>', 'why (kept in the event log)'),
    async (ctx, ids: string[], opts: { reason?: string }) => {
      const result = await (await ctx.cairn()).forget(ids, opts.reason);
      if (ctx.json) return ctx.printJson(result);
      for (const id of result.forgotten) ctx.out(`forgot ${id} (undo: cairn restore ${id})`);
      for (const id of result.unchanged) ctx.out(`${id} was already forgotten`);
    },
  );

  run(
    program.command('restore').summary('undo a forget').argument('<id>', 'memory id'),
    async (ctx, id: string) => {
      const memory = await (await ctx.cairn()).restore(id);
      if (ctx.json) return ctx.printJson(memory);
      ctx.out(`restored ${memoryLine(memory)}`);
    },
  );

  run(
    program
      .command('revise')
      .summary('replace a memory with a new version (history kept)')
      .argument('<id>', 'memory id')
      .argument('<text...>', 'the new text'),
    async (ctx, id: string, words: string[]) => {
      const cairn = await ctx.cairn();
      const result = await cairn.revise(id, words.join(' '));
      await startBackgroundFill(ctx.config, ctx.io.env, cairn.deps.store);
      if (ctx.json) return ctx.printJson(result);
      ctx.out(`revised ${id} → ${result.memory.id}`);
    },
  );

  run(
    program.command('show').summary('one memory with its versions and history').argument('<id>', 'memory id'),
    async (ctx, id: string) => {
      const detail = await (await ctx.cairn()).get(id);
      if (ctx.json) return ctx.printJson(detail);
      const m = detail.memory;
      ctx.out(memoryLine(m, 10_000));
      ctx.out(`  importance ${m.importance.toFixed(2)} · source ${m.source} · created ${when(m.createdAt)} · accessed ${m.accessCount}×`);
      if (m.project) ctx.out(`  project ${m.project}${m.session ? ` · session ${m.session}` : ''}`);
      for (const f of m.files) ctx.out(`  file ${f.path}${f.line ? `:${f.line}` : ''}${f.hash ? ` (sha256 ${f.hash.slice(0, 12)})` : ''}`);
      if (m.provenance?.transcript) ctx.out(`  from ${m.provenance.transcript}${m.provenance.line ? `:${m.provenance.line}` : ''}`);
      if (detail.versions.length > 1) {
        ctx.out('  versions:');
        for (const v of detail.versions) ctx.out(`    ${v.id === m.id ? '*' : ' '} ${day(v.createdAt)} ${memoryLine(v, 100)}`);
      }
      ctx.out('  history:');
      for (const e of detail.events) ctx.out(`    ${when(e.at)} ${e.type} by ${e.actor}${e.memoryId !== m.id ? ` (${e.memoryId})` : ''}`);
    },
  );

  run(
    program
      .command('list')
      .summary('list memories, newest first')
      .option('-n, --limit <n>', 'how many', positiveInt('limit'), 20)
      .option('--offset <n>', 'skip this many', (v: string) => Number(v), 0)
      .option('--kind <kinds>', 'only these kinds', list)
      .option('--scope <scopes>', 'only these scopes', list)
      .option('-t, --tags <tags>', 'only memories with any of these tags', list)
      .option('--forgotten', 'list forgotten memories instead')
      .option('--superseded', 'include superseded versions')
      .option('--project <id>', 'this project (and the user-wide memories) instead of the current one')
      .option('--no-project', 'the memories without a project (and the user-wide ones)')
      .option('--all-projects', 'every project'),
    async (
      ctx,
      opts: { limit: number; offset: number; kind?: Kind[]; scope?: Scope[]; tags?: string[]; forgotten?: boolean; superseded?: boolean; project?: string | false; allProjects?: boolean },
    ) => {
      const cairn = await ctx.cairn();
      const filter: ListOptions = {
        ...(opts.kind ? { kinds: opts.kind } : {}),
        ...(opts.scope ? { scopes: opts.scope } : {}),
        ...(opts.tags ? { anyTags: opts.tags } : {}),
        ...(opts.forgotten ? { onlyDeleted: true } : {}),
        ...(opts.superseded ? { includeSuperseded: true } : {}),
        ...(typeof opts.project === 'string' ? { project: opts.project } : opts.project === false ? { project: null } : {}),
      };
      const memories = await cairn.list({ ...filter, limit: opts.limit, offset: opts.offset, ...(opts.allProjects ? { allProjects: true } : {}) });
      // The whole listing fits on this page: say what the other projects hold (memories are kept per project).
      const spread = memories.length < opts.limit && opts.offset === 0 && !opts.allProjects ? await listedElsewhere(cairn, filter) : null;
      if (ctx.json) return ctx.printJson(memories);
      const line = spread ? elsewhereLine(spread) : null;
      if (memories.length === 0) {
        const searched = filter.project !== undefined ? filter.project : cairn.deps.project;
        const where = opts.allProjects ? '' : searched === null ? ' without a project' : ` in this project (${searched})`;
        ctx.out(`no memories${where}${line ? `; ${line}` : ''}`);
      }
      for (const m of memories) ctx.out(`${day(m.createdAt)} ${memoryLine(m)}`);
      if (memories.length > 0 && line) ctx.note(`also ${line}`);
    },
  );

  for (const pin of [true, false]) {
    run(
      program
        .command(pin ? 'pin' : 'unpin')
        .summary(pin ? 'always put a memory first' : 'stop pinning a memory')
        .argument('<id>', 'memory id'),
      async (ctx, id: string) => {
        const memory = await (await ctx.cairn()).update(id, { pinned: pin });
        if (ctx.json) return ctx.printJson(memory);
        ctx.out(`${pin ? 'pinned' : 'unpinned'} ${memoryLine(memory)}`);
      },
    );
  }
}

/** Matches another project holds that a recall scoped to `searched` did not show (at most 50; `more` when there may be more). */
async function matchesElsewhere(cairn: Cairn, input: RecallInput, searched: string | null, shown: RecallHit[]): Promise<{ matches: number; more: boolean }> {
  const probe = 50;
  const { project: _project, ...rest } = input;
  const all = await cairn.recall({ ...rest, allProjects: true, k: probe, touch: false, checkFiles: false });
  const seen = new Set(shown.map((h) => h.memory.id));
  // Visible here: this project's memories and the ones without a project.
  const hidden = all.hits.filter((h) => !seen.has(h.memory.id) && h.memory.project !== null && h.memory.project !== searched);
  return { matches: hidden.length, more: all.hits.length === probe && hidden.length > 0 };
}

/** Where the memories `filter` would list are, when none are in the listed project. */
async function listedElsewhere(cairn: Cairn, filter: ListOptions): Promise<MemorySpread | null> {
  const { project, ...rest } = filter;
  const spread = await memorySpread(project === undefined ? cairn.deps : { ...cairn.deps, project }, { filter: rest });
  return spread.otherTotal + spread.noProject > 0 ? spread : null;
}
