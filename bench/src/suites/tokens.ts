/**
 * `tokens`: how far cairn's token counts are from a real tokenizer (o200k_base, gpt-tokenizer;
 * Claude's current tokenizer is not public), on the text of ../shared's Claude Code transcripts:
 * prose (user and assistant messages) and code-heavy text (tool inputs and outputs). Files are
 * ordered by sha256 of their path and alternate between a tuning half and a report half; the piece-cost table is
 * fitted on the tuning half only and printed in the details (src/tokens.ts carries it), and the
 * errors are reported on both halves. Also: load time of the exact counters in a fresh process,
 * and the estimate's speed.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { estimateTokens } from 'cairn-memory';
import { forEachPiece, loadTokenCounter, PIECE_KINDS, PIECE_TABLE_LENGTH, type PieceKind } from 'cairn-memory/testing';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { atMost, metric } from '../metrics.js';
import { summarize } from '../stats.js';
import type { BenchContext, Metric, Suite, SuiteOutcome } from '../types.js';

type Kind = 'prose' | 'code';
type Half = 'tuning' | 'report';
interface Sample {
  half: Half;
  kind: Kind;
  text: string;
}

/** Longest text taken from one message or tool call. */
const MAX_SAMPLE_CHARS = 20_000;
const TARGET_ERROR = 0.1;

function jsonlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...jsonlFiles(path));
    else if (name.endsWith('.jsonl')) out.push(path);
  }
  return out;
}

function textOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map((part) => (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '')).join('\n');
  return value === undefined || value === null ? null : JSON.stringify(value);
}

/** Distinct messages and tool texts of the transcripts under `root`, each in its file's half. */
export function samplesOf(root: string): Sample[] {
  const seen = new Set<string>();
  const samples: Sample[] = [];
  // Files ordered by sha256 of their path under the root, alternately tuning and report.
  const files = jsonlFiles(root)
    .map((file) => ({ file, key: createHash('sha256').update(file.slice(root.length)).digest('hex') }))
    .sort((a, b) => (a.key < b.key ? -1 : 1));
  for (const [index, { file }] of files.entries()) {
    const half: Half = index % 2 === 0 ? 'tuning' : 'report';
    const add = (kind: Kind, text: string | null): void => {
      if (text === null || text.trim().length < 20) return;
      const key = createHash('sha1').update(text).digest('hex');
      if (seen.has(key)) return;
      seen.add(key);
      samples.push({ half, kind, text: text.slice(0, MAX_SAMPLE_CHARS) });
    };
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      let entry: { message?: { content?: unknown } };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        continue;
      }
      const content = entry?.message?.content;
      if (typeof content === 'string') add('prose', content);
      if (!Array.isArray(content)) continue;
      for (const block of content as Array<Record<string, unknown>>) {
        if (block.type === 'text') add('prose', textOf(block.text));
        else if (block.type === 'tool_use' && block.input && typeof block.input === 'object') for (const value of Object.values(block.input)) add('code', textOf(value));
        else if (block.type === 'tool_result') add('code', textOf(block.content));
      }
    }
  }
  return samples;
}

/** Pieces at least this long give the per-character slope of long pieces. */
const SLOPE_FROM = 8;

/**
 * Mean o200k cost of each piece kind and length on `samples`. A length seen fewer than 20 times
 * takes the previous length's cost plus the kind's slope (tokens per character past length 8,
 * measured over all such pieces), which is also the cost per character past the table.
 */
function fitCosts(samples: Sample[], count: (text: string) => number): Record<PieceKind, { byLength: number[]; beyond: number; pieces: number }> {
  const sums = new Map<string, [number, number]>();
  const cache = new Map<string, number>();
  const long = new Map<PieceKind, Array<[number, number]>>();
  for (const sample of samples) {
    let at = 0;
    forEachPiece(sample.text, (kind, length) => {
      // Pieces come in order and cover the text: a word's borrowed space is counted with the word.
      const piece = sample.text.slice(at, at + length);
      at += length;
      let tokens = cache.get(piece);
      if (tokens === undefined) {
        tokens = count(piece);
        cache.set(piece, tokens);
      }
      const key = `${kind}:${Math.min(length, PIECE_TABLE_LENGTH)}`;
      const sum = sums.get(key) ?? [0, 0];
      sum[0] += tokens;
      sum[1] += 1;
      sums.set(key, sum);
      if (length > SLOPE_FROM) {
        const list = long.get(kind) ?? [];
        list.push([length, tokens]);
        long.set(kind, list);
      }
    });
  }
  const out = {} as Record<PieceKind, { byLength: number[]; beyond: number; pieces: number }>;
  for (const kind of PIECE_KINDS) {
    const mean = (length: number): number | null => {
      const [tokens, n] = sums.get(`${kind}:${length}`) ?? [0, 0];
      return n >= 20 ? tokens / n : null;
    };
    const anchor = mean(SLOPE_FROM) ?? 1;
    let extraTokens = 0;
    let extraChars = 0;
    for (const [length, tokens] of long.get(kind) ?? []) {
      extraTokens += tokens - anchor;
      extraChars += length - SLOPE_FROM;
    }
    const slope = extraChars > 0 ? Math.max(0, extraTokens / extraChars) : 0;
    const byLength: number[] = [];
    let pieces = 0;
    for (let length = 1; length <= PIECE_TABLE_LENGTH; length++) {
      pieces += sums.get(`${kind}:${length}`)?.[1] ?? 0;
      const measured = length === PIECE_TABLE_LENGTH ? null : mean(length);
      const previous = byLength[length - 2];
      byLength.push(Number((measured ?? (previous === undefined ? 1 : previous + slope)).toFixed(3)));
    }
    out[kind] = { byLength, beyond: Number(slope.toFixed(3)), pieces };
  }
  return out;
}

/** Milliseconds a fresh process takes to import `specifier` and count one line, median of `runs`. */
function loadMs(specifier: string, runs: number): number {
  const script = `const t=performance.now();const m=await import(${JSON.stringify(specifier)});m.countTokens('const x = 1;');process.stdout.write(String(performance.now()-t));`;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: import.meta.dirname });
    const ms = Number(run.stdout);
    if (run.status === 0 && Number.isFinite(ms)) times.push(ms);
  }
  return times.length > 0 ? summarize(times).p50 : Number.NaN;
}

export const tokensSuite: Suite = {
  name: 'tokens',
  description: "cairn's token counts against a real tokenizer (o200k_base) on prose and code-heavy transcript text",
  async run(ctx: BenchContext): Promise<SuiteOutcome> {
    const root = join(ctx.dataDir, 'transcripts', 'claude-code');
    if (!existsSync(root)) return { status: 'skipped', reason: `no transcripts at ${root} (pass --data ../shared/data)` };
    const samples = samplesOf(root);
    const o200k = await loadTokenCounter();
    const metrics: Metric[] = [];
    const details: Record<string, unknown> = {};
    const fit = fitCosts(
      samples.filter((s) => s.half === 'tuning'),
      o200k,
    );
    details.fittedOnTuningHalf = fit;
    for (const half of ['tuning', 'report'] as const) {
      for (const kind of ['code', 'prose'] as const) {
        const chosen = samples.filter((s) => s.half === half && s.kind === kind);
        let chars = 0;
        let real = 0;
        let estimate = 0;
        let cl = 0;
        const perText: number[] = [];
        for (const s of chosen) {
          const r = o200k(s.text);
          const e = estimateTokens(s.text);
          chars += s.text.length;
          real += r;
          estimate += e;
          cl += cl100k(s.text);
          if (s.text.length >= 400) perText.push(Math.abs(e / r - 1));
        }
        const label = `${kind} (${half} half)`;
        const note = `${chosen.length} texts, ${chars.toLocaleString('en-US')} chars, ${real.toLocaleString('en-US')} o200k tokens`;
        const judged = half === 'report' ? atMost(TARGET_ERROR) : null;
        metrics.push(
          metric(`chars/4 error, ${label}`, chars / 4 / real - 1, 'ratio', { note }),
          metric(`cairn estimate |error|, ${label}`, Math.abs(estimate / real - 1), 'ratio', { target: judged, note: `signed ${(estimate / real - 1 >= 0 ? '+' : '')}${((estimate / real - 1) * 100).toFixed(1)}%` }),
          metric(`cairn estimate per-text |error| p90, ${label}`, perText.length > 0 ? quantile(perText, 0.9) : null, 'ratio', { note: `${perText.length} texts of ≥ 400 chars; p50 ${(quantile(perText, 0.5) * 100).toFixed(1)}%` }),
          metric(`cl100k_base vs o200k_base, ${label}`, cl / real - 1, 'ratio'),
        );
      }
    }
    // Speed of the estimate, warm, over all the text.
    const all = samples.map((s) => s.text);
    const chars = all.reduce((n, t) => n + t.length, 0);
    const start = performance.now();
    let sink = 0;
    for (const t of all) sink += estimateTokens(t);
    const ms = performance.now() - start;
    metrics.push(metric('estimate speed', chars / 1e6 / (ms / 1000), 'MB/s', { note: `${(chars / 1e6).toFixed(1)}M chars in ${ms.toFixed(0)} ms (sum ${sink})` }));
    const runs = ctx.quick ? 1 : 3;
    metrics.push(
      metric('o200k_base load + first count, fresh process', loadMs('gpt-tokenizer/encoding/o200k_base', runs), 'ms', { note: 'why hooks use the estimate' }),
      metric('cl100k_base load + first count, fresh process', loadMs('gpt-tokenizer/encoding/cl100k_base', runs), 'ms'),
    );
    ctx.log(`tokens: ${samples.length} texts; fit on the tuning half in details.fittedOnTuningHalf`);
    return { status: 'ok', datasets: [], metrics, details };
  },
};

function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN;
}
