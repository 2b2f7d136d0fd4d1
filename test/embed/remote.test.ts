import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createOllamaEmbedder, createOpenAIEmbedder } from '../../src/embed/remote.js';

interface Seen {
  url: string;
  headers: IncomingMessage['headers'];
  body: { model: string; input: string[] };
}

type Handler = (seen: Seen, res: ServerResponse) => void;

const servers: Server[] = [];

/** A fake server on 127.0.0.1 answering request n with handlers[n] (the last one repeats). */
async function fakeServer(...handlers: Handler[]): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const entry: Seen = { url: req.url ?? '', headers: req.headers, body: JSON.parse(raw) as Seen['body'] };
      seen.push(entry);
      handlers[Math.min(seen.length - 1, handlers.length - 1)]!(entry, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Handler => (_seen, res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};

/** Ollama-style answer: a vector [i+1, 1, 0…] per input, `dim` long. */
const ollamaOk = (dim = 3): Handler => (seen, res) =>
  json(200, { embeddings: seen.body.input.map((_, i) => [i + 1, 1, ...new Array<number>(dim - 2).fill(0)]) })(seen, res);

const fast = { backoffMs: 1, maxBackoffMs: 5 };

describe('Ollama embedder', () => {
  it('posts batches to /api/embed and returns unit vectors; the first response fixes the dimension', async () => {
    const server = await fakeServer(ollamaOk());
    const embedder = createOllamaEmbedder({ model: 'nomic-embed-text', url: server.url, batchSize: 2, ...fast });
    expect(embedder.model).toBe('ollama:nomic-embed-text');
    expect(embedder.dimension).toBe(0);
    const vectors = await embedder.embed(['a', 'b', 'c', 'd', 'e']);
    expect(server.seen.map((s) => [s.url, s.body.model, s.body.input])).toEqual([
      ['/api/embed', 'nomic-embed-text', ['a', 'b']],
      ['/api/embed', 'nomic-embed-text', ['c', 'd']],
      ['/api/embed', 'nomic-embed-text', ['e']],
    ]);
    expect(vectors).toHaveLength(5);
    expect(embedder.dimension).toBe(3);
    expect(Array.from(vectors[1]!)).toEqual([2 / Math.sqrt(5), 1 / Math.sqrt(5), 0].map(Math.fround));
    expect(await embedder.embed([])).toEqual([]);
  });

  it('retries a 500 with backoff and gives up with the endpoint, status and attempts', async () => {
    const server = await fakeServer(json(500, { error: 'model crashed' }));
    const embedder = createOllamaEmbedder({ model: 'm', url: server.url, retries: 2, ...fast });
    const error = await embedder.embed(['a']).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'EMBEDDER_FAILED' });
    expect((error as Error).message).toContain(`${server.url}/api/embed`);
    expect((error as Error).message).toMatch(/HTTP 500.*model crashed.*gave up after 3 attempts/);
    expect(server.seen).toHaveLength(3);
  });

  it('succeeds after a 429, honouring Retry-After', async () => {
    const server = await fakeServer(json(429, 'slow down', { 'retry-after': '0' }), ollamaOk());
    const embedder = createOllamaEmbedder({ model: 'm', url: server.url, ...fast });
    expect(await embedder.embed(['a'])).toHaveLength(1);
    expect(server.seen).toHaveLength(2);
  });

  it('does not retry other client errors', async () => {
    const server = await fakeServer(json(404, { error: 'model "m" not found, try pulling it first' }));
    const embedder = createOllamaEmbedder({ model: 'm', url: server.url, ...fast });
    await expect(embedder.embed(['a'])).rejects.toThrow(/HTTP 404.*try pulling it first/);
    expect(server.seen).toHaveLength(1);
  });

  it('rejects malformed JSON and malformed payloads without retrying', async () => {
    const broken = await fakeServer(json(200, '{"embeddings": [[1, 2'));
    await expect(createOllamaEmbedder({ model: 'm', url: broken.url, ...fast }).embed(['a'])).rejects.toMatchObject({
      code: 'EMBEDDER_FAILED',
      message: expect.stringMatching(/not valid JSON/),
    });
    expect(broken.seen).toHaveLength(1);
    const shapeless = await fakeServer(json(200, { embedding: [1, 2] }));
    await expect(createOllamaEmbedder({ model: 'm', url: shapeless.url }).embed(['a'])).rejects.toThrow(/no "embeddings" array/);
    const short = await fakeServer(json(200, { embeddings: [[1, 2]] }));
    await expect(createOllamaEmbedder({ model: 'm', url: short.url }).embed(['a', 'b'])).rejects.toThrow(/1 embeddings for 2 inputs/);
    const nan = await fakeServer(json(200, { embeddings: [[1, 'x']] }));
    await expect(createOllamaEmbedder({ model: 'm', url: nan.url }).embed(['a'])).rejects.toThrow(/finite numbers/);
  });

  it('fails on a dimension change between responses, and on a configured dimension mismatch', async () => {
    const server = await fakeServer(ollamaOk(3), ollamaOk(4));
    const embedder = createOllamaEmbedder({ model: 'm', url: server.url });
    await embedder.embed(['a']);
    await expect(embedder.embed(['b'])).rejects.toThrow(/4-dimensional vector, expected 3/);
    const configured = await fakeServer(ollamaOk(3));
    await expect(createOllamaEmbedder({ model: 'm', url: configured.url, dimension: 768 }).embed(['a'])).rejects.toThrow(/expected 768/);
  });

  it('times out a server that never answers, without retrying', async () => {
    const server = await fakeServer(() => {
      /* never respond */
    });
    const embedder = createOllamaEmbedder({ model: 'm', url: server.url, timeoutMs: 100, ...fast });
    const started = Date.now();
    await expect(embedder.embed(['a'])).rejects.toThrow(/no response within 100 ms/);
    expect(Date.now() - started).toBeLessThan(5_000);
    // On a loaded machine the 100 ms can pass before the server has parsed the request, so the
    // one attempt may not be seen; what must never happen is a second attempt.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server.seen.length).toBeLessThanOrEqual(1);
  });

  it('reports a server that is not running, without retrying', async () => {
    const server = await fakeServer(ollamaOk());
    const url = server.url;
    for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
    await expect(createOllamaEmbedder({ model: 'm', url, ...fast }).embed(['a'])).rejects.toThrow(/request failed: ECONNREFUSED/);
  });

  it('validates its options', () => {
    expect(() => createOllamaEmbedder({ model: '' })).toThrow(/needs a model name/);
    expect(() => createOllamaEmbedder({ model: 'm', url: 'not a url' })).toThrow(/not a valid URL/);
    expect(() => createOllamaEmbedder({ model: 'm', batchSize: 0 })).toThrow(/batchSize/);
  });
});

describe('OpenAI-compatible embedder', () => {
  it('posts to <url>/embeddings with the API key and reorders by index', async () => {
    const server = await fakeServer(json(200, { data: [{ index: 1, embedding: [0, 2] }, { index: 0, embedding: [3, 0] }], model: 'x' }));
    const embedder = createOpenAIEmbedder({ model: 'text-embedding-3-small', url: `${server.url}/v1/`, apiKey: 'sk-test' });
    expect(embedder.model).toBe('openai:text-embedding-3-small');
    const vectors = await embedder.embed(['first', 'second']);
    expect(vectors.map((v) => Array.from(v))).toEqual([[1, 0], [0, 1]]);
    expect(server.seen[0]!.url).toBe('/v1/embeddings');
    expect(server.seen[0]!.headers.authorization).toBe('Bearer sk-test');
    expect(server.seen[0]!.body).toEqual({ model: 'text-embedding-3-small', input: ['first', 'second'], encoding_format: 'float' });
  });

  it('sends no Authorization header without a key, and rejects a repeated index', async () => {
    const server = await fakeServer(json(200, { data: [{ index: 0, embedding: [1] }, { index: 0, embedding: [1] }] }));
    await expect(createOpenAIEmbedder({ model: 'm', url: server.url }).embed(['a', 'b'])).rejects.toThrow(/repeated index/);
    expect(server.seen[0]!.headers.authorization).toBeUndefined();
  });

  it('retries 503 then succeeds', async () => {
    const server = await fakeServer(json(503, 'busy'), json(503, 'busy'), json(200, { data: [{ index: 0, embedding: [1, 1] }] }));
    const [vector] = await createOpenAIEmbedder({ model: 'm', url: server.url, ...fast }).embed(['a']);
    expect(vector![0]).toBeCloseTo(Math.SQRT1_2, 6);
    expect(server.seen).toHaveLength(3);
  });
});
