import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './fake-model.js';

/**
 * A fake Gemini API server (`generativelanguage` v1beta) for the real Gemini CLI: `POST
 * /v1beta/models/{model}:streamGenerateContent?alt=sse` (the agent's turns), `:generateContent`
 * (the CLI's own utility calls: compression, its summary check) and `:countTokens`. Gemini CLI is
 * pointed at it with `GOOGLE_GEMINI_BASE_URL` and an API key (settings `security.auth.selectedType`
 * `gemini-api-key`). It records every request and answers from a script. 127.0.0.1 only.
 */

export interface GeminiRequest {
  method: string;
  /** `streamGenerateContent`, `generateContent`, `countTokens`, or the path of anything else. */
  kind: string;
  body: GeminiBody | null;
  raw: string;
}

export interface GeminiBody {
  contents?: Array<{ role?: string; parts?: Array<{ text?: string; functionCall?: unknown; functionResponse?: { name?: string; response?: unknown } }> }>;
  systemInstruction?: unknown;
}

/** An answer: text or one function call; `promptTokens` is the prompt size it reports (default 10). */
export type GeminiTurn = ({ text: string } | { call: string; args: Record<string, unknown> }) & { promptTokens?: number };

export type GeminiScript = (request: GeminiRequest, all: GeminiRequest[]) => GeminiTurn;

export interface FakeGemini {
  url: string;
  requests: GeminiRequest[];
  setScript(script: GeminiScript): void;
  close(): Promise<void>;
}

/** Gemini CLI's compression calls: `generateContent` with its compression prompt as the system instruction. */
export function isCompressionRequest(request: GeminiRequest): boolean {
  return request.kind === 'generateContent' && JSON.stringify(request.body?.systemInstruction ?? '').includes('state_snapshot');
}

function answer(turn: GeminiTurn, model: string): unknown {
  const parts = 'text' in turn ? [{ text: turn.text }] : [{ functionCall: { name: turn.call, args: turn.args } }];
  const prompt = turn.promptTokens ?? 10;
  return { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: prompt, candidatesTokenCount: 5, totalTokenCount: prompt + 5 }, modelVersion: model };
}

export async function startFakeGemini(script: GeminiScript = () => ({ text: 'ok' })): Promise<FakeGemini> {
  const requests: GeminiRequest[] = [];
  let current = script;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: GeminiBody | null = null;
      try {
        body = raw.length > 0 ? (JSON.parse(raw) as GeminiBody) : null;
      } catch {
        body = null;
      }
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const match = /\/models\/([^/:]+):(\w+)$/.exec(path);
      const model = match?.[1] ?? 'gemini-fake';
      const request: GeminiRequest = { method: req.method ?? 'GET', kind: match?.[2] ?? path, body, raw };
      requests.push(request);
      if (request.kind === 'countTokens') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ totalTokens: 50 }));
      } else if (request.kind === 'streamGenerateContent') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`data: ${JSON.stringify(answer(current(request, requests), model))}\r\n\r\n`);
      } else if (request.kind === 'generateContent') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer(current(request, requests), model)));
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 404, message: 'fake Gemini API server', status: 'NOT_FOUND' } }));
      }
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setScript(next) {
      current = next;
    },
    close: () => closeServer(server),
  };
}
