import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEmbedder, parseEmbedderSpec } from '../../src/embed/index.js';

const tinyFolder = path.resolve(import.meta.dirname, '../fixtures/embed/tiny-wordpiece');

describe('embedder specs', () => {
  it('parses every form', () => {
    expect(parseEmbedderSpec('hash')).toEqual({ kind: 'hash' });
    expect(parseEmbedderSpec(' hash:128 ')).toEqual({ kind: 'hash', dimension: 128 });
    expect(parseEmbedderSpec('static:/models/potion-base-8M')).toEqual({ kind: 'static', location: '/models/potion-base-8M' });
    expect(parseEmbedderSpec('ollama:nomic-embed-text:latest@http://127.0.0.1:11434')).toEqual({
      kind: 'ollama',
      model: 'nomic-embed-text:latest',
      url: 'http://127.0.0.1:11434',
    });
    expect(parseEmbedderSpec('openai:text-embedding-3-small')).toEqual({ kind: 'openai', model: 'text-embedding-3-small' });
    expect(parseEmbedderSpec('use-lite')).toEqual({ kind: 'use-lite' });
    expect(parseEmbedderSpec('use-lite:512')).toEqual({ kind: 'use-lite' });
    expect(parseEmbedderSpec('transformers:./m')).toEqual({ kind: 'transformers', location: './m' });
    expect(parseEmbedderSpec('onnx:bge-small-en-v1.5-q')).toEqual({ kind: 'onnx', location: 'bge-small-en-v1.5-q' });
  });

  it('rejects unknown or incomplete specs with INVALID_INPUT naming the valid forms', () => {
    for (const spec of ['word2vec', 'hash:0', 'static:', 'ollama:@http://x', 'use-lite:256', '']) {
      expect(() => parseEmbedderSpec(spec), spec).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', field: 'embedder' }));
    }
    expect(() => parseEmbedderSpec('word2vec')).toThrow(/expected one of: onnx:<model>, hash\[:<dimension>\], static:<folder>/);
  });
});

describe('createEmbedder', () => {
  it('builds hash and static embedders, resolving model folders by path or by name under home', async () => {
    expect((await createEmbedder('hash:32')).model).toBe('hash:v1:32');
    expect((await createEmbedder(`static:${tinyFolder}`)).model).toBe('static:tiny-wordpiece');
    const cwd = path.dirname(tinyFolder);
    expect((await createEmbedder('static:./tiny-wordpiece', { cwd })).dimension).toBe(4);
    const home = await mkdtemp(path.join(tmpdir(), 'cairn-home-'));
    try {
      await cp(tinyFolder, path.join(home, 'models', 'tiny'), { recursive: true });
      expect((await createEmbedder('static:tiny', { home })).model).toBe('static:tiny');
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it('builds remote embedders without touching the network until used, passing the API key', async () => {
    let authorization: string | undefined;
    const server = createServer((req, res) => {
      authorization = req.headers.authorization;
      req.resume();
      req.on('end', () => res.end(JSON.stringify({ data: [{ index: 0, embedding: [1, 0] }] })));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const openai = await createEmbedder(`openai:m@${url}`, { apiKey: 'sk-x', remote: { retries: 0 } });
      expect(openai.model).toBe('openai:m');
      await openai.embed(['a']);
      expect(authorization).toBe('Bearer sk-x');
      expect((await createEmbedder('ollama:nomic-embed-text@http://127.0.0.1:9')).model).toBe('ollama:nomic-embed-text');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('fails with NOT_FOUND for a missing model folder', async () => {
    await expect(createEmbedder('static:/nonexistent/model')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
