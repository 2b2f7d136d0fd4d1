/**
 * The default embedder: all-MiniLM-L6-v2 when its files are in place (sizes checked), BM25 with a
 * one-line reason when they are missing or damaged, and BM25 when the configuration opts out.
 * No real model is needed: the files are sparse files of the recorded sizes (so `doctor`, which
 * checks the sha256, finds them altered), and nothing here loads a model.
 */
import { mkdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ALL_MINILM_L6_V2_Q, DEFAULT_EMBEDDER_SPEC } from '../../src/embed/onnx-models.js';
import { runCli, tempDir } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function home(): string {
  const dir = tempDir('cairn-default-embedder-');
  dirs.push(dir);
  return dir;
}

/** Model files of the recorded sizes (zeros: the sizes pass, the sha256 does not). */
function placeModel(at: string, shorten: string | null = null): string {
  const folder = join(at, 'models', ALL_MINILM_L6_V2_Q.name);
  mkdirSync(folder, { recursive: true });
  for (const file of ALL_MINILM_L6_V2_Q.files) {
    writeFileSync(join(folder, file.name), '');
    truncateSync(join(folder, file.name), file.name === shorten ? 1000 : file.bytes);
  }
  return folder;
}

/** An empty stand-in for the package's models folder: only `<home>/models` counts. */
function noPackageModels(): string {
  const dir = home();
  mkdirSync(join(dir, 'models'));
  return join(dir, 'models');
}

describe('default embedder resolution', () => {
  it('is onnx:all-minilm-l6-v2-q when its files are present with the right sizes', () => {
    const h = home();
    placeModel(h);
    const config = loadConfig({ home: h, env: {}, packageModels: noPackageModels() });
    expect(config).toMatchObject({ embedder: DEFAULT_EMBEDDER_SPEC, embedderSource: 'default' });
    expect(config.embedderNote).toBeUndefined();
    // The package's copy counts too when <home>/models has none.
    const other = home();
    expect(loadConfig({ home: other, env: {}, packageModels: join(h, 'models') })).toMatchObject({ embedder: DEFAULT_EMBEDDER_SPEC });
  });

  it('is BM25 with a one-line reason naming the file and the fix when files are missing or truncated', () => {
    const missing = loadConfig({ home: home(), env: {}, packageModels: noPackageModels() });
    expect(missing).toMatchObject({ embedder: null, embedderSource: 'default' });
    expect(missing.embedderNote).toMatch(/all-minilm-l6-v2-q.*model\.onnx is missing; run `node .*fetch-model\.mjs all-minilm-l6-v2-q/);
    expect(missing.embedderNote).not.toContain('\n');
    const h = home();
    placeModel(h, 'tokenizer.json');
    const truncated = loadConfig({ home: h, env: {}, packageModels: noPackageModels() });
    expect(truncated.embedder).toBeNull();
    expect(truncated.embedderNote).toMatch(/tokenizer\.json is 1000 bytes, expected 711661 \(truncated or replaced\)/);
  });

  it('is BM25 when opted out ("embedder": null or "none", CAIRN_EMBEDDER=none), and an explicit embedder wins', () => {
    const h = home();
    placeModel(h);
    writeFileSync(join(h, 'config.json'), JSON.stringify({ embedder: null }));
    expect(loadConfig({ home: h, env: {} })).toMatchObject({ embedder: null, embedderSource: 'config' });
    writeFileSync(join(h, 'config.json'), JSON.stringify({ embedder: 'none' }));
    expect(loadConfig({ home: h, env: {} })).toMatchObject({ embedder: null, embedderSource: 'config' });
    writeFileSync(join(h, 'config.json'), JSON.stringify({ embedder: 'hash:64' }));
    expect(loadConfig({ home: h, env: {} })).toMatchObject({ embedder: 'hash:64', embedderSource: 'config' });
    expect(loadConfig({ home: h, env: { CAIRN_EMBEDDER: 'none' } })).toMatchObject({ embedder: null, embedderSource: 'env' });
    expect(loadConfig({ home: h, env: { CAIRN_EMBEDDER: 'onnx:e5-small-v2-q' } })).toMatchObject({ embedder: 'onnx:e5-small-v2-q', embedderSource: 'env' });
  });
});

describe('status and doctor with the default embedder', () => {
  // `<home>/models` wins over the package's copy, so these hold with or without a fetched model.
  const env = { CAIRN_EMBEDDER: '' };

  it('status names the default, counts vectors present and waiting; remember and recall never load the model', async () => {
    const h = home();
    placeModel(h);
    for (const text of ['use pnpm, never npm', 'deploys go through staging first', 'prefers short paragraphs']) {
      expect((await runCli(['remember', text], { home: h, env })).code).toBe(0);
    }
    // The model files are zeros: loading them would fail. Recall on an empty vector index runs on BM25 without loading.
    const recall = await runCli(['recall', 'pnpm', '--json'], { home: h, env });
    expect(recall.code).toBe(0);
    expect(recall.stderr).not.toContain('unavailable');
    const status = await runCli(['status'], { home: h, env });
    expect(status.stdout).toContain('embedder     onnx:all-minilm-l6-v2-q (384 dims, the default) · recall: BM25 until the first vectors are filled');
    expect(status.stdout).toMatch(/vectors {6}0 of 3 memories · 3 waiting \(filled in the background after ingests and `cairn remember`, and by an idle MCP server; `cairn reindex --fill` now\)/);
    const json = (await runCli(['status', '--json'], { home: h, env })).json<{ vectors: { present: number; waiting: number; filling: unknown }; embedderConfig: { source: string } }>();
    expect(json.vectors).toMatchObject({ present: 0, waiting: 3, filling: null });
    expect(json.embedderConfig).toEqual({ source: 'default' });
    // doctor checks the sha256: the zero-filled files fail it, with the file named.
    const doctor = await runCli(['doctor', '--json'], { home: h, env });
    const checks = doctor.json<{ checks: Array<{ check: string; status: string; detail: string }> }>().checks;
    expect(checks.find((c) => c.check === 'embedder')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/model\.onnx does not match its sha256/) });
  });

  it('status and doctor give the reason when the default model is missing; opted out says so', async () => {
    const h = home();
    placeModel(h, 'model.onnx');
    await runCli(['remember', 'use pnpm, never npm'], { home: h, env });
    const status = await runCli(['status'], { home: h, env });
    expect(status.stdout).toMatch(/embedder {5}none · recall runs on BM25 alone: the default embedder onnx:all-minilm-l6-v2-q is not installed: model file .*model\.onnx is 1000 bytes/);
    const doctor = (await runCli(['doctor', '--json'], { home: h, env })).json<{ checks: Array<{ check: string; status: string; detail: string }> }>().checks;
    expect(doctor.find((c) => c.check === 'embedder')).toMatchObject({ status: 'warn', detail: expect.stringContaining('is not installed') });
    writeFileSync(join(h, 'config.json'), JSON.stringify({ embedder: null }));
    expect((await runCli(['status'], { home: h, env })).stdout).toContain('embedder     none (turned off by "embedder" in config.json) · recall runs on BM25 alone');
  });

  it('reindex --fill embeds what waits, then status shows every vector present', async () => {
    const h = home();
    const hash = { CAIRN_EMBEDDER: 'hash:64' };
    for (const text of ['one memory', 'another memory', 'a third one']) await runCli(['remember', text], { home: h, env: hash });
    expect((await runCli(['status'], { home: h, env: hash })).stdout).toContain('0 of 3 memories · 3 waiting');
    const fill = await runCli(['reindex', '--fill', '--max-seconds', '60'], { home: h, env: hash });
    expect(fill.code).toBe(0);
    expect(fill.stdout).toMatch(/hash:v1:64: 3 vectors written in .* s · 0 still waiting · done/);
    expect((await runCli(['status'], { home: h, env: hash })).stdout).toMatch(/vectors {6}3 of 3 memories\n/);
    expect((await runCli(['reindex', '--max-seconds', '5'], { home: h, env: hash })).stderr).toContain('--max-seconds goes with --fill');
  });

  it('ingest writes without vectors, then fills them in a bounded run; --fill-seconds 0 skips the fill', async () => {
    const transcripts = join(process.cwd(), 'test', 'fixtures', 'transcripts');
    const hash = { CAIRN_EMBEDDER: 'hash:64' };
    const skipped = home();
    const none = await runCli(['ingest', transcripts, '--fill-seconds', '0', '--json'], { home: skipped, env: hash });
    expect(none.code).toBe(0);
    expect(none.json<{ vectors?: unknown }>().vectors).toBeUndefined();
    expect((await runCli(['status'], { home: skipped, env: hash })).stdout).toMatch(/vectors {6}0 of \d+ memories · \d+ waiting/);
    const filled = home();
    const run = await runCli(['ingest', transcripts, '--json'], { home: filled, env: hash });
    const vectors = run.json<{ vectors: { outcome: string; embedded: number; remaining: number; model: string } }>().vectors;
    expect(vectors).toMatchObject({ outcome: 'done', remaining: 0, model: 'hash:v1:64' });
    expect(vectors.embedded).toBeGreaterThan(0);
    expect((await runCli(['status'], { home: filled, env: hash })).stdout).toContain(`vectors      ${vectors.embedded} of ${vectors.embedded} memories`);
  });
});
