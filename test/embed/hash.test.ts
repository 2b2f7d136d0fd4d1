import { describe, expect, it } from 'vitest';
import { createHashEmbedder } from '../../src/embed/hash.js';
import { dot } from '../../src/embed/vector.js';

function norm(v: Float32Array): number {
  return Math.sqrt(dot(v, v));
}

describe('hash embedder', () => {
  it('names its model after version and dimension', () => {
    const embedder = createHashEmbedder({ dimension: 128 });
    expect(embedder.model).toBe('hash:v1:128');
    expect(embedder.dimension).toBe(128);
    expect(createHashEmbedder().model).toBe('hash:v1:64');
  });

  it('returns unit vectors of the configured dimension, including for empty text', async () => {
    const embedder = createHashEmbedder({ dimension: 32 });
    const vectors = await embedder.embed(['hello world', '', '!!!', 'processWorkspaceChanges']);
    for (const v of vectors) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(32);
      expect(norm(v)).toBeCloseTo(1, 6);
    }
  });

  it('is deterministic', async () => {
    const a = createHashEmbedder();
    const b = createHashEmbedder();
    const [x] = await a.embed(['the resolver races on workspace changes']);
    const [y] = await b.embed(['the resolver races on workspace changes']);
    expect(Array.from(x!)).toEqual(Array.from(y!));
  });

  it('gives texts sharing words a higher cosine than unrelated texts', async () => {
    const embedder = createHashEmbedder({ dimension: 256 });
    const [query, related, unrelated] = await embedder.embed([
      'sqlite busy timeout in WAL mode',
      'set the sqlite busy timeout when WAL mode is on',
      'the user prefers short paragraphs in articles',
    ]);
    expect(dot(query!, related!)).toBeGreaterThan(0.5);
    expect(dot(query!, related!)).toBeGreaterThan(dot(query!, unrelated!) + 0.3);
  });

  it('matches code identifiers by their parts', async () => {
    const embedder = createHashEmbedder({ dimension: 256 });
    const [a, b] = await embedder.embed(['processWorkspaceChanges', 'process workspace changes']);
    expect(dot(a!, b!)).toBeGreaterThan(0.5);
  });

  it('rejects a bad dimension', () => {
    expect(() => createHashEmbedder({ dimension: 0 })).toThrow(/dimension/);
    expect(() => createHashEmbedder({ dimension: 1.5 })).toThrow(/dimension/);
  });
});
