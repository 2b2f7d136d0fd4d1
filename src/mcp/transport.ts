/**
 * cairn's MCP stdio transport: newline-delimited JSON-RPC like the SDK's StdioServerTransport, but
 * every bad line gets a JSON-RPC answer and none stops the server:
 *
 * - a line over {@link MAX_LINE_BYTES} (10 MiB) is skipped as it streams in (never buffered whole)
 *   and answered with -32600, with the request's id when its first bytes name one;
 * - a line that is not JSON: -32700 (parse error), id null;
 * - a batch (JSON array; MCP 2025-06-18 removed JSON-RPC batching) or an object that is not a
 *   JSON-RPC 2.0 message: -32600 (invalid request), with its id when it has a usable one;
 * - unknown methods (-32601) and bad params (-32602) are answered by the server itself.
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Longest accepted JSON-RPC line (bytes, without the newline). Documented in docs/MCP.md. */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;

type Id = string | number | null;

/** The id of a message, when it has a usable one. */
function idOf(value: unknown): Id {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/** The id named in the first bytes of a line too long to parse, if any. */
function idFromHead(head: string): Id {
  const match = /"id"\s*:\s*(-?\d{1,15}(?![\d.eE])|"(?:[^"\\]|\\.){0,200}")/.exec(head);
  if (!match) return null;
  const raw = match[1]!;
  if (raw.startsWith('"')) {
    try {
      return JSON.parse(raw) as string;
    } catch {
      return null;
    }
  }
  return Number(raw);
}

export interface LineTransportOptions {
  /** @default MAX_LINE_BYTES */
  maxLineBytes?: number;
}

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private chunks: Buffer[] = [];
  private size = 0;
  /** Skipping the rest of an over-long line; its head, for the id. */
  private skipping: { head: string; bytes: number } | null = null;
  private started = false;
  private closed = false;
  /** Requests received and not yet answered, so input that ends early still gets its answers. */
  private readonly pending = new Set<string | number>();
  private idleWaiters: Array<() => void> = [];
  private readonly maxLineBytes: number;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    options: LineTransportOptions = {},
  ) {
    this.maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
  }

  private readonly onData = (chunk: Buffer | string): void => {
    let buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    while (buf.length > 0) {
      const nl = buf.indexOf(0x0a);
      const part = nl === -1 ? buf : buf.subarray(0, nl);
      if (this.skipping) this.skipping.bytes += part.length;
      else if (this.size + part.length > this.maxLineBytes) {
        const head = Buffer.concat([...this.chunks, part]).subarray(0, 4096).toString('utf8');
        this.skipping = { head, bytes: this.size + part.length };
        this.chunks = [];
        this.size = 0;
      } else {
        this.chunks.push(part);
        this.size += part.length;
      }
      if (nl === -1) break;
      this.endLine();
      buf = buf.subarray(nl + 1);
    }
  };

  private endLine(): void {
    if (this.skipping) {
      const { head, bytes } = this.skipping;
      this.skipping = null;
      this.reply(
        idFromHead(head),
        ErrorCode.InvalidRequest,
        `message of ${bytes} bytes is over cairn's limit of ${this.maxLineBytes} bytes (${Math.round(this.maxLineBytes / 1048576)} MiB) per line; it was skipped`,
      );
      return;
    }
    const line = (this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks)).toString('utf8').replace(/\r$/, '');
    this.chunks = [];
    this.size = 0;
    if (line.trim().length === 0) return;
    this.handleLine(line);
  }

  private handleLine(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.reply(null, ErrorCode.ParseError, `parse error: not JSON (${error instanceof Error ? error.message : String(error)})`);
      return;
    }
    if (Array.isArray(value)) {
      this.reply(null, ErrorCode.InvalidRequest, 'invalid request: JSON-RPC batches are not supported (MCP 2025-06-18 removed them); send one message per line');
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const hasMethod = value !== null && typeof value === 'object' && typeof (value as { method?: unknown }).method === 'string';
      const id = idOf(value);
      // A malformed notification (a method, no id) gets no answer, as JSON-RPC says; anything else does.
      if (hasMethod && (value as { id?: unknown }).id === undefined && (value as { jsonrpc?: unknown }).jsonrpc === '2.0') {
        this.onerror?.(new Error('invalid notification ignored'));
        return;
      }
      this.reply(id, ErrorCode.InvalidRequest, 'invalid request: expected a JSON-RPC 2.0 object with "jsonrpc": "2.0", a string "method" and a string or number "id"');
      return;
    }
    const message = parsed.data as { id?: unknown; method?: unknown };
    if (typeof message.method === 'string' && (typeof message.id === 'string' || typeof message.id === 'number')) this.pending.add(message.id);
    try {
      this.onmessage?.(parsed.data);
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private reply(id: Id, code: number, message: string): void {
    void this.send({ jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage).catch(() => {});
  }

  private readonly onError = (error: Error): void => {
    this.onerror?.(error);
  };

  private readonly onEnd = (): void => {
    this.ended = true;
    this.settle();
  };

  private ended = false;

  private settle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const check of waiters) check();
  }

  /** Resolves once the input has ended and every request read has been answered. */
  drained(): Promise<void> {
    return new Promise((resolve) => {
      const check = (): void => {
        if (this.ended && this.pending.size === 0) resolve();
        else this.idleWaiters.push(check);
      };
      check();
    });
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('LineTransport already started');
    this.started = true;
    this.input.on('data', this.onData);
    this.input.on('error', this.onError);
    this.input.on('end', this.onEnd);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return;
    const json = `${JSON.stringify(message)}\n`;
    await new Promise<void>((resolve) => {
      if (this.output.write(json)) resolve();
      else this.output.once('drain', resolve);
    });
    const reply = message as { id?: unknown; method?: unknown };
    if (reply.method === undefined && (typeof reply.id === 'string' || typeof reply.id === 'number') && this.pending.delete(reply.id)) this.settle();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onError);
    this.input.off('end', this.onEnd);
    this.chunks = [];
    this.onclose?.();
  }
}
