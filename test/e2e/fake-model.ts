import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small fake model server for end-to-end tests with the real clients: it speaks the Anthropic
 * Messages API (streaming SSE, for Claude Code) and the OpenAI Responses API (streaming SSE, for
 * Codex), records every request body, and answers from a script — plain text, or one tool call.
 * It listens on 127.0.0.1 only.
 */

export interface RecordedRequest {
  api: 'anthropic' | 'openai' | 'other';
  method: string;
  path: string;
  body: unknown;
  /** The whole request body as text: what the model would read (system, messages, tools). */
  raw: string;
}

/**
 * What the model answers: text, or a call to one tool with these arguments. `inputTokens` is the
 * prompt size the answer reports (default 10): a large one makes a client compact its context.
 */
export type ScriptedTurn = ({ text: string } | { tool: string; input: Record<string, unknown>; namespace?: string }) & { inputTokens?: number };

/** Decides the answer from the request (after the request is recorded). */
export type Script = (request: RecordedRequest, all: RecordedRequest[]) => ScriptedTurn;

export interface FakeModel {
  url: string;
  requests: RecordedRequest[];
  /** Only the requests that reached a model endpoint (messages or responses). */
  modelRequests(): RecordedRequest[];
  setScript(script: Script): void;
  close(): Promise<void>;
}

const sse = (res: ServerResponse, event: string, data: unknown): void => {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
};

let counter = 0;
const nextId = (prefix: string): string => `${prefix}_${Date.now().toString(36)}${(counter++).toString(36)}`;

function anthropicStream(res: ServerResponse, body: { model?: string }, turn: ScriptedTurn): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const model = body.model ?? 'claude-fake';
  sse(res, 'message_start', {
    type: 'message_start',
    message: { id: nextId('msg'), type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } },
  });
  if ('text' in turn) {
    sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: turn.text } });
    sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
    sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } });
  } else {
    sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: nextId('toolu'), name: turn.tool, input: {} } });
    sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(turn.input) } });
    sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
    sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 5 } });
  }
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

function openaiStream(res: ServerResponse, body: { model?: string }, turn: ScriptedTurn): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const id = nextId('resp');
  const model = body.model ?? 'gpt-fake';
  const base = { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model, status: 'in_progress', output: [] as unknown[] };
  sse(res, 'response.created', { type: 'response.created', response: base });
  let item: Record<string, unknown>;
  if ('text' in turn) {
    item = { type: 'message', id: nextId('msg'), role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: turn.text, annotations: [] }] };
    sse(res, 'response.output_item.added', { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    sse(res, 'response.output_text.delta', { type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: turn.text });
  } else {
    item = { type: 'function_call', id: nextId('fc'), call_id: nextId('call'), name: turn.tool, ...(turn.namespace ? { namespace: turn.namespace } : {}), arguments: JSON.stringify(turn.input), status: 'completed' };
    sse(res, 'response.output_item.added', { type: 'response.output_item.added', output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } });
  }
  sse(res, 'response.output_item.done', { type: 'response.output_item.done', output_index: 0, item });
  sse(res, 'response.completed', {
    type: 'response.completed',
    response: {
      ...base,
      status: 'completed',
      output: [item],
      usage: { input_tokens: turn.inputTokens ?? 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: (turn.inputTokens ?? 10) + 5 },
    },
  });
  res.end();
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Stop a fake server: its open connections (the clients keep them alive) first. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((done) => {
    server.closeAllConnections();
    server.close(() => done());
  });
}

export async function startFakeModel(script: Script = () => ({ text: 'ok' })): Promise<FakeModel> {
  const requests: RecordedRequest[] = [];
  let current = script;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      let body: unknown = null;
      try {
        body = raw.length > 0 ? JSON.parse(raw) : null;
      } catch {
        body = null;
      }
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const api = path.endsWith('/messages') ? 'anthropic' : path.endsWith('/responses') ? 'openai' : 'other';
      const recorded: RecordedRequest = { api, method: req.method ?? 'GET', path, body, raw };
      requests.push(recorded);
      if (api === 'other' || req.method !== 'POST') {
        // count_tokens, model lists, telemetry: answer something harmless.
        res.writeHead(path.endsWith('/count_tokens') ? 200 : 404, { 'content-type': 'application/json' });
        res.end(path.endsWith('/count_tokens') ? JSON.stringify({ input_tokens: 100 }) : JSON.stringify({ error: { type: 'not_found', message: 'fake model server' } }));
        return;
      }
      const turn = current(recorded, requests);
      if (api === 'anthropic') anthropicStream(res, (body ?? {}) as { model?: string }, turn);
      else openaiStream(res, (body ?? {}) as { model?: string }, turn);
    })().catch((error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    modelRequests: () => requests.filter((r) => r.api !== 'other'),
    setScript(next) {
      current = next;
    },
    close: () => closeServer(server),
  };
}
