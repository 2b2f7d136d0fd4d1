/**
 * Bulk embedding in worker threads (src/embed/onnx-pool.ts): the same vectors, bit for bit, as the
 * in-thread embedder (one text per model call in both), in the caller's order; a worker's typed
 * error (bad model files) reaches the caller with its code; without a worker script the pool
 * embeds in this thread.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_MINILM_L6_V2_Q } from '../../src/embed/onnx-models.js';
import { createOnnxWorkerPool } from '../../src/embed/onnx-pool.js';
import { createOnnxEmbedder, onnxModelFolder } from '../../src/embed/onnx.js';

const REAL = onnxModelFolder(ALL_MINILM_L6_V2_Q.name);
const HAS_MODEL = existsSync(join(REAL, 'model.onnx'));
if (!HAS_MODEL) console.warn(`skipping the real-model worker pool test: ${REAL} is absent (run node scripts/fetch-model.mjs; .ci/run does)`);

// Tests run from TypeScript sources, where there is no built onnx-worker.js: bundle it once,
// inside the checkout (test-artifacts/ is ignored) so the bundle resolves onnxruntime-node.
const dir = join(process.cwd(), 'test-artifacts', `onnx-pool-${process.pid}`);
let workerUrl: URL;
beforeAll(async () => {
  const outfile = join(dir, 'onnx-worker.mjs');
  await build({ entryPoints: [join(process.cwd(), 'src/embed/onnx-worker.ts')], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile, packages: 'external', logLevel: 'silent' });
  workerUrl = pathToFileURL(outfile);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TEXTS = Array.from({ length: 37 }, (_, i) =>
  i % 3 === 0 ? `memory ${i}: use pnpm, never npm, in package ${i}` : i % 3 === 1 ? `deploys of service ${i} go through the staging cluster first` : `the user prefers short paragraphs (${i})`,
);

describe.skipIf(!HAS_MODEL)('onnx worker pool (the real all-MiniLM-L6-v2)', () => {
  it('gives the in-thread embedder\'s vectors bit for bit, in order, with two workers', async () => {
    const single = createOnnxEmbedder(REAL, ALL_MINILM_L6_V2_Q);
    const pool = createOnnxWorkerPool(REAL, ALL_MINILM_L6_V2_Q, { workers: 2, chunk: 4, workerUrl });
    try {
      const expected = await single.embed(TEXTS);
      const got = await pool.embed(TEXTS);
      expect(pool.loaded).toBe(true);
      expect(got).toHaveLength(TEXTS.length);
      for (let i = 0; i < TEXTS.length; i++) expect(Array.from(got[i]!)).toEqual(Array.from(expected[i]!));
      const [query] = await pool.embed(['which package manager'], { purpose: 'query' });
      expect(Array.from(query!)).toEqual(Array.from((await single.embed(['which package manager'], { purpose: 'query' }))[0]!));
    } finally {
      await single.close?.();
      await pool.close();
    }
  }, 120_000);
});

describe('onnx worker pool without a model', () => {
  it('passes a worker\'s EMBEDDER_UNAVAILABLE on with its one-line reason', async () => {
    const pool = createOnnxWorkerPool(join(dir, 'no-such-model'), ALL_MINILM_L6_V2_Q, { workers: 2, workerUrl });
    try {
      await expect(pool.embed(['a', 'b', 'c'])).rejects.toMatchObject({ code: 'EMBEDDER_UNAVAILABLE', message: expect.stringContaining('model.onnx is missing') });
    } finally {
      await pool.close();
    }
  });

  it('embeds in this thread when there is no worker script (same error path, no worker started)', async () => {
    const pool = createOnnxWorkerPool(join(dir, 'no-such-model'), ALL_MINILM_L6_V2_Q, { workerUrl: pathToFileURL(join(dir, 'absent.mjs')) });
    await expect(pool.embed(['a'])).rejects.toMatchObject({ code: 'EMBEDDER_UNAVAILABLE' });
    expect(pool.loaded).toBe(false);
    await pool.close();
  });
});
