/**
 * The LLM providers against local fakes: HTTP servers on 127.0.0.1 speaking the Anthropic
 * Messages API and the OpenAI chat API, and a fake `claude` executable on PATH — including
 * timeouts, 429s and malformed answers.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from '../../src/distill/llm/anthropic.js';
import { createClaudeCliProvider } from '../../src/distill/llm/claude-cli.js';
import { createOpenAiProvider } from '../../src/distill/llm/openai.js';
import { extractJson, parseJudgment, parseObservations } from '../../src/distill/llm/parse.js';
import { LlmError } from '../../src/distill/llm/types.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

interface Fake {
  url: string;
  requests: Array<{ path: string; headers: IncomingMessage['headers']; body: unknown }>;
  handle: Handler;
}

let server: Server;
const fake: Fake = { url: '', requests: [], handle: () => {} };

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      fake.requests.push({ path: req.url ?? '', headers: req.headers, body: body ? (JSON.parse(body) as unknown) : null });
      fake.handle(req, body, res);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((done) => server.close(() => done()));
});

function reply(status: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_req, _body, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

const request = { system: 'sys', prompt: 'hello', maxTokens: 50 };
const rejection = async (p: Promise<unknown>): Promise<LlmError> => {
  try {
    await p;
  } catch (error) {
    return error as LlmError;
  }
  throw new Error('expected a rejection');
};

describe('Anthropic Messages API provider', () => {
  it('sends the key, version, system and prompt, and reads text and usage', async () => {
    fake.requests = [];
    fake.handle = reply(200, { content: [{ type: 'text', text: '{"facts": []}' }], usage: { input_tokens: 12, output_tokens: 5 } });
    const provider = createAnthropicProvider({ apiKey: 'sk-test', model: 'claude-test', baseUrl: fake.url });
    expect(await provider.complete(request)).toEqual({ text: '{"facts": []}', inputTokens: 12, outputTokens: 5 });
    const [sent] = fake.requests;
    expect(sent?.path).toBe('/v1/messages');
    expect(sent?.headers['x-api-key']).toBe('sk-test');
    expect(sent?.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent?.body).toEqual({ model: 'claude-test', max_tokens: 50, temperature: 0, system: 'sys', messages: [{ role: 'user', content: 'hello' }] });
  });

  it('retries a 429 (honouring Retry-After) and gives up with rate-limited after the retries', async () => {
    let n = 0;
    fake.handle = (req, body, res) => (n++ === 0 ? reply(429, { error: 'slow down' }, { 'retry-after': '0' })(req, body, res) : reply(200, { content: [{ type: 'text', text: 'ok' }], usage: {} })(req, body, res));
    const provider = createAnthropicProvider({ apiKey: 'k', baseUrl: fake.url, retryDelayMs: 1 });
    expect((await provider.complete(request)).text).toBe('ok');
    expect(n).toBe(2);
    fake.handle = reply(429, { error: 'slow down' }, { 'retry-after': '0' });
    const error = await rejection(createAnthropicProvider({ apiKey: 'k', baseUrl: fake.url, retryDelayMs: 1, maxRetries: 1 }).complete(request));
    expect(error).toBeInstanceOf(LlmError);
    expect(error.kind).toBe('rate-limited');
  });

  it('times out on a server that never answers, and calls non-JSON or content-less answers malformed', async () => {
    fake.handle = () => {};
    const timedOut = await rejection(createAnthropicProvider({ apiKey: 'k', baseUrl: fake.url, timeoutMs: 100, maxRetries: 0 }).complete(request));
    expect(timedOut.kind).toBe('timeout');
    fake.handle = reply(200, '<html>gateway</html>');
    expect((await rejection(createAnthropicProvider({ apiKey: 'k', baseUrl: fake.url }).complete(request))).kind).toBe('malformed');
    fake.handle = reply(200, { type: 'message' });
    expect((await rejection(createAnthropicProvider({ apiKey: 'k', baseUrl: fake.url }).complete(request))).kind).toBe('malformed');
    fake.handle = reply(401, { error: 'bad key' });
    expect((await rejection(createAnthropicProvider({ apiKey: 'k', baseUrl: fake.url }).complete(request))).kind).toBe('http');
  });
});

describe('OpenAI-compatible provider', () => {
  it('posts chat completions with a bearer key and reads the message and usage', async () => {
    fake.requests = [];
    fake.handle = reply(200, { choices: [{ message: { role: 'assistant', content: 'hi' } }], usage: { prompt_tokens: 7, completion_tokens: 2 } });
    const provider = createOpenAiProvider({ baseUrl: `${fake.url}/v1`, model: 'llama3', apiKey: 'sk-o' });
    expect(await provider.complete(request)).toEqual({ text: 'hi', inputTokens: 7, outputTokens: 2 });
    expect(fake.requests[0]?.path).toBe('/v1/chat/completions');
    expect(fake.requests[0]?.headers.authorization).toBe('Bearer sk-o');
    expect(fake.requests[0]?.body).toMatchObject({ model: 'llama3', messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'hello' }] });
  });

  it('estimates usage when a local server reports none, and retries a 503', async () => {
    let n = 0;
    fake.handle = (req, body, res) => (n++ === 0 ? reply(503, 'busy')(req, body, res) : reply(200, { choices: [{ message: { content: 'abcdefgh' } }] })(req, body, res));
    const result = await createOpenAiProvider({ baseUrl: fake.url, model: 'm', retryDelayMs: 1 }).complete(request);
    expect(result).toEqual({ text: 'abcdefgh', inputTokens: 2, outputTokens: 2 });
    fake.handle = reply(200, { choices: [] });
    expect((await rejection(createOpenAiProvider({ baseUrl: fake.url, model: 'm' }).complete(request))).kind).toBe('malformed');
  });
});

describe('claude -p provider', () => {
  let bin: string;
  beforeAll(() => {
    bin = mkdtempSync(join(tmpdir(), 'cairn-fake-claude-'));
    const script = [
      '#!/usr/bin/env node',
      "let input = '';",
      "process.stdin.on('data', (c) => (input += c));",
      "process.stdin.on('end', () => {",
      "  const mode = process.env.FAKE_CLAUDE_MODE || 'ok';",
      "  if (mode === 'sleep') return setTimeout(() => {}, 60000);",
      "  if (mode === 'fail') { process.stderr.write('API Error: 429 rate limit'); process.exit(1); }",
      "  if (mode === 'garbage') { process.stdout.write('not json at all'); return; }",
      "  const args = process.argv.slice(2).join(' ');",
      "  process.stdout.write(JSON.stringify({ type: 'result', is_error: false, result: JSON.stringify({ echo: input.slice(-5), args, child: process.env.CAIRN_HOOK_CHILD }), usage: { input_tokens: 30, output_tokens: 4 } }));",
      '});',
    ].join('\n');
    writeFileSync(join(bin, 'claude'), script);
    chmodSync(join(bin, 'claude'), 0o755);
  });
  afterAll(() => rmSync(bin, { recursive: true, force: true }));
  const env = (mode: string): NodeJS.ProcessEnv => ({ ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`, FAKE_CLAUDE_MODE: mode });

  it('runs `claude -p --output-format json` with the prompt on stdin, marked as a cairn child', async () => {
    const result = await createClaudeCliProvider({ env: env('ok'), model: 'haiku' }).complete(request);
    expect(result.inputTokens).toBe(30);
    expect(JSON.parse(result.text)).toEqual({ echo: 'hello', args: '-p --output-format json --model haiku', child: '1' });
  });

  it('reports a hang as a timeout, a failing exit as rate-limited, garbage as malformed, a missing binary as spawn', async () => {
    expect((await rejection(createClaudeCliProvider({ env: env('sleep'), timeoutMs: 200 }).complete(request))).kind).toBe('timeout');
    expect((await rejection(createClaudeCliProvider({ env: env('fail') }).complete(request))).kind).toBe('rate-limited');
    expect((await rejection(createClaudeCliProvider({ env: env('garbage') }).complete(request))).kind).toBe('malformed');
    expect((await rejection(createClaudeCliProvider({ env: env('ok'), command: join(bin, 'no-such-claude') }).complete(request))).kind).toBe('spawn');
  });
});

describe('reading model answers', () => {
  it('finds the JSON in chatter and fences, keeps valid facts, drops invalid ones', () => {
    expect(extractJson('Sure! ```json\n{"a": [1, {"b": "}"}]}\n``` hope it helps')).toEqual({ a: [1, { b: '}' }] });
    expect(() => extractJson('no json here')).toThrow(LlmError);
    const { observations, invalid } = parseObservations('{"facts": [{"text": "Use `pnpm`", "kind": "preference", "scope": "user"}, {"text": "x", "kind": "fact"}, {"text": "", "kind": "fact", "scope": "project"}]}');
    expect(observations).toEqual([{ text: 'Use `pnpm`', kind: 'preference', scope: 'user' }]);
    expect(invalid).toBe(2);
    expect(() => parseObservations('{"memories": []}')).toThrow(/no "facts"/);
    expect(parseJudgment('{"action":"UPDATE","id":"M1","text":"new"}')).toEqual({ action: 'UPDATE', id: 'M1', text: 'new' });
    expect(() => parseJudgment('{"action":"MAYBE"}')).toThrow(LlmError);
  });
});
