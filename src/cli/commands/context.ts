import { spawnSync } from 'node:child_process';
import type { Command } from 'commander';
import { DEFAULT_CONTEXT_BUDGET } from '../../context/build.js';
import { CORE_LINE_BUDGET, ensureCoreFile, readCore } from '../../context/core.js';
import { RANKER_NAMES } from '../../context/rankers.js';
import { invalid } from '../../errors.js';
import { EXACT_TOKENIZER, loadTokenCounter } from '../../tokens.js';
import { positiveInt, type Run } from './memory.js';

/** Packings tried at most before the smallest budget's result is taken. */
const MAX_PACKINGS = 6;
const MIN_BUDGET = 50;

/**
 * Pack again into smaller estimated budgets until the output's exact count is within `budget`
 * (the estimate is ~1% off on code-heavy text but can be 10% off on lines of hashes and hex, so
 * this sometimes takes two or three packings). A smaller budget can pick other items and count
 * more than a larger one did, so the margin grows with each packing, and the best output that
 * fits is kept.
 */
export async function fitToBudget<R extends { markdown: string }>(
  first: R,
  budget: number,
  count: (text: string) => number,
  pack: (budget: number) => Promise<R>,
): Promise<{ result: R; tokens: number; packings: number }> {
  let result = first;
  let tokens = count(result.markdown);
  let best = tokens <= budget ? { result, tokens } : null;
  let estimated = budget;
  let packings = 1;
  while (best === null && packings < MAX_PACKINGS && estimated > MIN_BUDGET) {
    estimated = Math.max(MIN_BUDGET, Math.min(estimated - 1, Math.floor((estimated * budget) / tokens) - 8 * packings));
    result = await pack(estimated);
    tokens = count(result.markdown);
    packings++;
    if (tokens <= budget) best = { result, tokens };
  }
  return best === null ? { result, tokens, packings } : { ...best, packings };
}

export function registerContextCommands(program: Command, run: Run): void {
  run(
    program
      .command('context')
      .summary('the Markdown cairn injects into an agent')
      .description(
        'Core memory, then continuation state, then corrections and rules, then facts — relevant to --query, or to the project\n' +
          'and session when there is none — packed greedily by value per token into --budget, with each memory id.\n' +
          `--budget is honoured by an exact ${EXACT_TOKENIZER} count of the output (the packing itself uses cairn's fast estimate;\n` +
          'when the output counts over, it is packed again into a smaller budget).\n' +
          '--json adds the budget accounting: tokens per section (estimated) and what was left out and why.',
      )
      .option('-q, --query <text>', 'what the agent is about to work on')
      .option('-b, --budget <tokens>', `token budget (${EXACT_TOKENIZER} tokens), any size from 50 to 200000`, positiveInt('budget'), DEFAULT_CONTEXT_BUDGET)
      .option('-r, --ranker <name>', `one of ${RANKER_NAMES.join(', ')}`, 'composite')
      .option('--session <id>', 'favour memories from this agent session')
      .option('--no-learn', "with --session: pack by the shipped value model alone, not adjusted by this project's measured use (learn from use, on by default: docs/BENCHMARKS.md)"),
    async (ctx, opts: { query?: string; budget: number; ranker: string; session?: string; learn?: boolean }) => {
      const cairn = await ctx.cairn();
      const input = {
        ranker: opts.ranker,
        ...(opts.query ? { query: opts.query } : {}),
        ...(opts.session ? { favorSession: opts.session } : {}),
        ...(opts.learn === false ? { learnFromUse: false } : {}),
      };
      const [count, built] = await Promise.all([loadTokenCounter(), cairn.context({ ...input, budget: opts.budget })]);
      const fitted = await fitToBudget(built, opts.budget, count, (budget) => cairn.context({ ...input, budget }));
      const warnings = [...fitted.result.warnings];
      if (fitted.tokens > opts.budget) warnings.push(`the smallest context is ${fitted.tokens} tokens, over the budget of ${opts.budget} (core memory is always included: trim it or raise --budget)`);
      const result = { ...fitted.result, budget: opts.budget, tokens: fitted.tokens, tokenizer: EXACT_TOKENIZER, warnings };
      if (ctx.json) return ctx.printJson(result);
      for (const warning of result.warnings) ctx.note(`warning: ${warning}`);
      if (result.markdown.length === 0) {
        ctx.note('nothing to inject yet (no memories and no core memory)');
        return;
      }
      ctx.io.stdout.write(result.markdown);
      ctx.note(`${result.tokens}/${result.budget} tokens (${EXACT_TOKENIZER}) · ${result.sections.map((s) => `${s.name} ~${s.tokens}`).join(' · ')} · ${result.omitted.length} left out`);
    },
  );

  run(
    program
      .command('core')
      .summary('show, edit or check core memory (MEMORY.md)')
      .description(
        `Core memory is a short Markdown file always injected first: <repo>/.cairn/MEMORY.md for the project (commit it to share)\n` +
          `and <home>/MEMORY.md with --user. Budget: ${CORE_LINE_BUDGET} non-empty lines; cairn warns when it is over.`,
      )
      .argument('[action]', 'show | edit | check | path', 'show')
      .option('--user', 'the user core memory instead of the project one'),
    async (ctx, action: string, opts: { user?: boolean }) => {
      const cairn = await ctx.cairn();
      const path = opts.user ? cairn.deps.core.user : cairn.deps.core.project;
      if (!path) throw invalid('no core memory path (run inside a project, or use --user)');
      const core = readCore(opts.user ? 'user' : 'project', path);
      switch (action) {
        case 'path':
          return ctx.json ? ctx.printJson({ path }) : ctx.out(path);
        case 'show':
          if (ctx.json) return ctx.printJson(core);
          if (!core.exists) return ctx.out(`no core memory yet at ${path} (create it with \`cairn core edit${opts.user ? ' --user' : ''}\`)`);
          ctx.io.stdout.write(core.text.endsWith('\n') ? core.text : `${core.text}\n`);
          if (core.overBudget) ctx.note(`warning: ${core.lines} lines, over the budget of ${core.budget}`);
          return;
        case 'check': {
          if (ctx.json) return ctx.printJson({ path, exists: core.exists, lines: core.lines, budget: core.budget, overBudget: core.overBudget });
          ctx.out(`${path}: ${core.exists ? `${core.lines}/${core.budget} lines` : 'absent'}${core.overBudget ? ' — OVER BUDGET' : ''}`);
          if (core.overBudget) throw invalid(`core memory is over its budget (${core.lines} > ${core.budget} lines)`);
          return;
        }
        case 'edit': {
          ensureCoreFile(path);
          const editor = ctx.io.env.VISUAL ?? ctx.io.env.EDITOR ?? 'vi';
          const result = spawnSync(editor, [path], { stdio: 'inherit', shell: true });
          if (result.status !== 0) throw invalid(`editor "${editor}" exited with ${result.status ?? result.signal}; the file is ${path}`);
          const after = readCore(core.which, path);
          ctx.out(`${path}: ${after.lines}/${after.budget} lines${after.overBudget ? ' — over budget, trim it' : ''}`);
          return;
        }
        default:
          throw invalid(`unknown core action "${action}" (show, edit, check, path)`, 'action');
      }
    },
  );
}
