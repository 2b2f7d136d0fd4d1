import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchFusionGrid, loadBeir, quickSubset, runBeirSet } from '../../bench/src/suites/beir.js';
import { assignHalves } from '../../bench/src/suites/halves.js';
import { normalizeDiaId, parseLocomo, runLocomo, turnText } from '../../bench/src/suites/locomo.js';
import type { BenchReport, SuiteResult } from '../../bench/src/types.js';
import { runCli, tempDirs } from '../helpers/cli.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');
const BEIR_TINY = join(FIXTURES, 'beir-tiny');
const LOCOMO_TINY = join(FIXTURES, 'locomo-tiny.json');

/** Every directory made here is removed after this file's tests. */
const scratch = tempDirs();

/** A `--data` folder laid out like ../shared/data, from the tiny fixtures. */
function dataDir(): string {
  const data = scratch('cairn-retrieval-data-');
  cpSync(BEIR_TINY, join(data, 'beir', 'scifact'), { recursive: true });
  mkdirSync(join(data, 'beir', 'cosqa', 'qrels'), { recursive: true });
  cpSync(join(BEIR_TINY, 'corpus.jsonl'), join(data, 'beir', 'cosqa', 'corpus.jsonl'));
  cpSync(join(BEIR_TINY, 'queries.jsonl'), join(data, 'beir', 'cosqa', 'queries_test.jsonl'));
  cpSync(join(BEIR_TINY, 'qrels', 'test.tsv'), join(data, 'beir', 'cosqa', 'qrels', 'test.tsv'));
  mkdirSync(join(data, 'locomo'));
  cpSync(LOCOMO_TINY, join(data, 'locomo', 'locomo-dev.json'));
  return data;
}

const inUnitRange = (value: number) => value >= 0 && value <= 1;

function expectOk(report: BenchReport, suite: string): SuiteResult {
  expect(report.schema).toBe('cairn-bench/1');
  const result = report.results[0] as SuiteResult;
  expect(result).toMatchObject({ suite, status: 'ok', reason: null });
  for (const d of result.datasets) {
    expect(d.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(d.generator).toBeNull();
  }
  for (const m of result.metrics) {
    expect(m.unit).toBe('share');
    if (m.value !== null) expect(inUnitRange(m.value)).toBe(true);
    else expect(m.note).toMatch(/skipped/);
  }
  return result;
}

describe('beir suite', () => {
  it('reads a BEIR folder: title + text, judged queries only, graded qrels', () => {
    const set = loadBeir(BEIR_TINY, 'tiny');
    expect(set).not.toBeNull();
    expect(set!.corpus).toHaveLength(12);
    expect(set!.corpus[0]).toEqual({ id: 'd1', text: 'Vitamin D and bone density\nVitamin D supplementation increases bone mineral density in older adults with deficiency.' });
    expect(set!.corpus.find((d) => d.id === 'd7')!.text.startsWith('def read_json')).toBe(true);
    expect(set!.queries.map((q) => q.id)).toEqual(['q1', 'q2', 'q3', 'q4']);
    expect(set!.qrels.get('q2')).toEqual(new Map([['d2', 1], ['d9', 1]]));
    expect(loadBeir(join(BEIR_TINY, 'nope'), 'x')).toBeNull();
  });

  it('the quick subset keeps the first queries, their documents and a few others', () => {
    const set = loadBeir(BEIR_TINY, 'tiny')!;
    const quick = quickSubset(set, 2, 3);
    expect(quick.queries.map((q) => q.id)).toEqual(['q1', 'q2']);
    const ids = quick.corpus.map((d) => d.id);
    expect(ids).toEqual(expect.arrayContaining(['d1', 'd2', 'd9']));
    expect(ids).toHaveLength(6);
  });

  it('splits queries into tuning and report halves by sha256 of their id, the same in --quick subsets', () => {
    const ids = Array.from({ length: 101 }, (_, i) => `q${i}`);
    const halves = assignHalves(ids, 'scifact');
    const tuning = ids.filter((id) => halves.get(id) === 'tuning');
    expect(tuning).toHaveLength(51);
    expect(ids.filter((id) => halves.get(id) === 'report')).toHaveLength(50);
    // Decided by the ids alone: file order does not matter, the salt does.
    expect(assignHalves([...ids].reverse(), 'scifact')).toEqual(halves);
    expect(ids.filter((id) => assignHalves(ids, 'cosqa').get(id) === 'tuning')).not.toEqual(tuning);
    const set = loadBeir(BEIR_TINY, 'tiny')!;
    expect([...set.halves.keys()].sort()).toEqual(['q1', 'q2', 'q3', 'q4']);
    expect([...set.halves.values()].filter((h) => h === 'tuning')).toHaveLength(2);
    expect(quickSubset(set, 2, 3).halves).toEqual(set.halves);
  });

  it('reads fusion grid points as rank:share, rank:share:k, rank:share:k:feedback or rank:share:k:feedback:range', () => {
    const before = process.env.CAIRN_BENCH_FUSION;
    try {
      process.env.CAIRN_BENCH_FUSION = '0.5:0.5, 1:1:20, 2:2:10:0.5, 2.5:1.5:8:0:1';
      // Without the range field a point scales BM25 by the best score, whatever the defaults do.
      expect(benchFusionGrid()).toEqual([
        { vectorRankWeight: 0.5, vectorSignalShare: 0.5, bm25Range: false },
        { vectorRankWeight: 1, vectorSignalShare: 1, rrfK: 20, bm25Range: false },
        { vectorRankWeight: 2, vectorSignalShare: 2, rrfK: 10, feedback: 0.5, bm25Range: false },
        { vectorRankWeight: 2.5, vectorSignalShare: 1.5, rrfK: 8, feedback: 0, bm25Range: true },
      ]);
      process.env.CAIRN_BENCH_FUSION = '1:1:10:0:2';
      expect(() => benchFusionGrid()).toThrow(/range/);
      process.env.CAIRN_BENCH_FUSION = '1:1:0';
      expect(() => benchFusionGrid()).toThrow(/rank:share/);
      process.env.CAIRN_BENCH_FUSION = '1:1:10:-1';
      expect(() => benchFusionGrid()).toThrow(/feedback/);
    } finally {
      if (before === undefined) delete process.env.CAIRN_BENCH_FUSION;
      else process.env.CAIRN_BENCH_FUSION = before;
    }
  });

  it('measures BM25, vectors and hybrid through cairn, merging duplicate texts and skipping the query\'s own id', async () => {
    const set = loadBeir(BEIR_TINY, 'tiny')!;
    const result = await runBeirSet(scratch('cairn-beir-'), set, { project: 'beir-tiny', staticFolder: null });
    expect(result).toMatchObject({ documents: 12, memories: 11, merged: 1, rejected: 0, queries: 4 });
    expect(Object.keys(result.modes)).toEqual(['bm25', 'vector hash:v1:1024', 'hybrid hash:v1:1024']);
    for (const mode of Object.values(result.modes)) {
      for (const value of [mode.ndcgAt10, mode.recallAt10, mode.recallAt100, mode.mrrAt10]) expect(inUnitRange(value)).toBe(true);
      expect(mode.queries).toBe(4);
      expect(mode.splits.tuning.queries + mode.splits.report.queries).toBe(4);
      // The whole is the mean of the halves, weighted by their sizes.
      expect((mode.splits.tuning.ndcgAt10 * mode.splits.tuning.queries + mode.splits.report.ndcgAt10 * mode.splits.report.queries) / 4).toBeCloseTo(mode.ndcgAt10, 10);
    }
    // q4's judged document "q4" shares the query's id, so at most half of q4's judgements count.
    expect(result.modes.bm25!.recallAt100).toBeCloseTo(0.875, 6);
    expect(result.modes.bm25!.ndcgAt10).toBeGreaterThan(0.5);
    expect(result.notes.join(' ')).toMatch(/static embedder skipped/);
  });

  it('runs from the CLI on SciFact- and CoSQA-shaped folders, and skips without data', async () => {
    const home = scratch('cairn-beir-home-');
    const run = await runCli(['bench', 'beir', '--quick', '--data', dataDir(), '--json'], { home, cwd: home });
    expect(run.code).toBe(0);
    const result = expectOk(run.json<BenchReport>(), 'beir');
    const names = result.metrics.map((m) => m.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'SciFact nDCG@10 (bm25)',
        'SciFact recall@100 (bm25)',
        'SciFact nDCG@10 (vector hash:v1:1024)',
        'SciFact nDCG@10 (hybrid hash:v1:1024)',
        'CoSQA MRR@10 (bm25)',
        'CoSQA MRR@10 (hybrid hash:v1:1024)',
        'SciFact nDCG@10, tuning half (bm25)',
        'SciFact nDCG@10, report half (bm25)',
        'CoSQA MRR@10, tuning half (hybrid hash:v1:1024)',
      ]),
    );
    const scifact = result.metrics.find((m) => m.name === 'SciFact nDCG@10 (bm25)')!;
    expect(scifact.target).toEqual({ op: '>=', value: 0.7 });
    expect(scifact.anchor).toMatch(/0\.665/);
    expect(result.datasets.map((d) => d.name)).toEqual(['beir/scifact (quick subset)', 'beir/cosqa (quick subset)']);

    const none = await runCli(['bench', 'beir', '--quick', '--data', scratch('cairn-empty-'), '--json'], { home, cwd: home });
    expect(none.code).toBe(0);
    expect(none.json<BenchReport>().results[0]).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/no BEIR data/) });
  });
});

describe('locomo suite', () => {
  it('normalises dialogue ids and counts what it cannot', () => {
    expect(normalizeDiaId('D1:3')).toBe('D1:3');
    expect(normalizeDiaId('D:11:26')).toBe('D11:26');
    expect(normalizeDiaId('D30:05')).toBe('D30:5');
    expect(normalizeDiaId(' D2:1 ')).toBe('D2:1');
    expect(normalizeDiaId('bogus')).toBeNull();
    expect(turnText('Ana', '8 May, 2023', 'hello', 'a dog')).toBe('Ana (8 May, 2023): hello [shares a photo: a dog]');
  });

  it('reads conversations and the questions of categories 1–4', () => {
    const data = parseLocomo(JSON.parse(readFileSync(LOCOMO_TINY, 'utf8')) as unknown);
    expect(data.conversations.map((c) => [c.id, c.turns.length])).toEqual([
      ['conv-a', 5],
      ['conv-b', 2],
    ]);
    expect(data.conversations[0]!.turns[2]).toEqual({
      diaId: 'D1:3',
      text: 'Ana (1:56 pm on 8 May, 2023): I adopted a puppy named Biscuit last week. [shares a photo: a photo of a small brown dog]',
    });
    expect(data.questions.map((q) => [q.conversation, q.category, q.evidence])).toEqual([
      ['conv-a', 1, ['D1:3']],
      ['conv-a', 2, ['D1:2', 'D2:1']],
      ['conv-a', 4, ['D2:2', 'D1:1']],
      ['conv-b', 1, ['D1:2']],
    ]);
    expect(data.badEvidence).toBe(2);
    expect(data.noEvidence).toBe(1);
  });

  it('recalls evidence turns within each conversation, BM25 and hybrid', async () => {
    const data = parseLocomo(JSON.parse(readFileSync(LOCOMO_TINY, 'utf8')) as unknown);
    const result = await runLocomo(scratch('cairn-locomo-'), data);
    expect(result).toMatchObject({ conversations: 2, turns: 7, memories: 7, questions: 4 });
    expect(Object.keys(result.modes)).toEqual(['bm25', 'hybrid hash:v1:1024', 'bm25, asked again', 'bm25, asked again, diversify']);
    // Asking again does not demote the answers (#15.6): the same questions score as before.
    expect(result.modes['bm25, asked again']!.recallAt5).toBe(result.modes.bm25!.recallAt5);
    for (const mode of Object.values(result.modes)) {
      for (const value of [mode.recallAt5, mode.recallAt10, mode.anyAt10]) expect(inUnitRange(value)).toBe(true);
      expect(mode.splits.tuning.questions + mode.splits.report.questions).toBe(4);
      expect(mode.recallAt10).toBeGreaterThanOrEqual(mode.recallAt5);
      expect(Object.keys(mode.byCategory).sort()).toEqual(['1', '2', '4']);
    }
    expect(result.modes.bm25!.byCategory['1']!.recallAt10).toBe(1);
    const replies = await runLocomo(scratch('cairn-locomo-reply-'), data, undefined, [], { layout: 'reply', askTwice: false });
    expect(replies).toMatchObject({ layout: 'reply', turns: 7, memories: 7, questions: 4 });
    expect(Object.keys(replies.modes)).toEqual(['bm25', 'hybrid hash:v1:1024']);
    // An embedder whose model files are not there is skipped with a line, not a failed suite.
    const lines: string[] = [];
    const missing = await runLocomo(scratch('cairn-locomo-missing-'), data, (line) => lines.push(line), ['onnx:/nonexistent/cairn-model'], { askTwice: false });
    expect(Object.keys(missing.modes)).toEqual(['bm25']);
    expect(lines.join('\n')).toMatch(/onnx:\/nonexistent\/cairn-model skipped/);
  });

  it('runs from the CLI', async () => {
    const home = scratch('cairn-locomo-home-');
    const run = await runCli(['bench', 'locomo', '--quick', '--data', dataDir(), '--json'], { home, cwd: home });
    expect(run.code).toBe(0);
    const result = expectOk(run.json<BenchReport>(), 'locomo');
    const at5 = result.metrics.find((m) => m.name === 'evidence recall@5 (bm25)')!;
    expect(at5.target).toEqual({ op: '>=', value: 0.8 });
    expect(result.metrics.map((m) => m.name)).toEqual(
      expect.arrayContaining(['evidence recall@10 (hybrid hash:v1:1024)', 'evidence recall@5 (bm25, turn + the turn it answers)', 'evidence recall@5, tuning half (hybrid hash:v1:1024, turn + the turn it answers)']),
    );
  });
});
