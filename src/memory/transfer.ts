import { z } from 'zod';
import { isCairnError } from '../errors.js';
import { KINDS, SCOPES, type Memory } from '../types.js';
import { IMPORT_MAX_LINE_BYTES, type LineTooLong } from './bounded-lines.js';
import { memoryWrite, prepareMemory } from './remember.js';
import { ConversationContext, embeddingText } from './context.js';
import { embedAll, type Deps } from '../deps.js';

/** One line of an import file (SPEC §5.1). */
export const importLineSchema = z.object({
  text: z.string(),
  kind: z.enum(KINDS).optional(),
  tags: z.array(z.string()).optional(),
  scope: z.enum(SCOPES).optional(),
  project: z.string().nullable().optional(),
  importance: z.number().min(0).max(1).optional(),
  createdAt: z.union([z.string(), z.number()]).optional(),
  meta: z.record(z.string(), z.unknown()).optional(),
  /**
   * Where the memory came from. A conversation imported one memory per turn gives each turn its
   * session and its place in it (`{"sessionId": "chat-7", "line": 12}`): recall then lets adjacent
   * turns lend each other relevance (src/recall/neighbours.ts).
   */
  provenance: z
    .object({ transcript: z.string().optional(), line: z.number().int().min(0).optional(), uuid: z.string().optional(), sessionId: z.string().optional(), turnId: z.string().optional() })
    .strict()
    .optional(),
  /**
   * The words this memory answers (`Memory.context`). When absent, a turn of a conversation
   * imported one memory per turn gets the turn before it in the same session (the previous line
   * of the file with the same `provenance.sessionId` and `line` one less); null: none.
   */
  context: z.string().nullable().optional(),
});
export type ImportLine = z.infer<typeof importLineSchema>;

export interface ImportProblem {
  line: number;
  error: string;
}

export interface ImportResult {
  lines: number;
  imported: number;
  duplicates: number;
  failed: ImportProblem[];
}

function stripUndefined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function parseTime(value: string | number | undefined): number | undefined | 'bad' {
  if (value === undefined) return undefined;
  const ms = typeof value === 'number' ? value : Date.parse(value);
  return Number.isFinite(ms) ? ms : 'bad';
}

/** zod issues as one line: `kind: Invalid option …`. */
export function describeZodError(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || 'value'}: ${issue.message}`).join('; ');
}

/** A chunk is committed at this many memories, or this much text, whichever comes first. */
const CHUNK_MEMORIES = 256;
const CHUNK_CHARS = 4 * 1024 * 1024;

/**
 * Import memories from JSONL text, one memory per line. Bad lines are reported with their line
 * number and skipped; the rest are imported. Lines are committed a chunk at a time (up to
 * CHUNK_MEMORIES, in one transaction when the store has `writeMemories`), each memory keyed by
 * content hash: a killed import leaves a consistent store holding every chunk committed before
 * the kill, and a re-run adds no duplicates. An identical memory already stored (or earlier in the
 * file) is not written again and has its access bumped, as `remember` does. `remember`'s
 * near-duplicate probe is not run: an import reports no similar memories, so it was spent on
 * nothing (it was most of an import's time). `onProgress` gets the last line of each committed chunk;
 * `options.chunkMemories` overrides CHUNK_MEMORIES (tests).
 */
export async function importJsonl(
  deps: Deps,
  lines: AsyncIterable<string | LineTooLong> | Iterable<string | LineTooLong>,
  onProgress?: (done: number) => void,
  options: { chunkMemories?: number } = {},
): Promise<ImportResult> {
  const chunkMemories = options.chunkMemories ?? CHUNK_MEMORIES;
  const result: ImportResult = { lines: 0, imported: 0, duplicates: 0, failed: [] };
  let lineNo = 0;
  const conversation = new ConversationContext();
  let chunk: Array<{ line: number; memory: Memory }> = [];
  let chunkChars = 0;
  const flush = async (): Promise<void> => {
    if (chunk.length > 0) await writeChunk(deps, chunk, result);
    chunk = [];
    chunkChars = 0;
    if (lineNo > 0) onProgress?.(lineNo);
  };
  for await (const raw of lines) {
    lineNo++;
    // Over the limit: reported by a bounded reader (boundedLines) without being read, or here.
    const tooLong = typeof raw === 'string' ? (raw.length > IMPORT_MAX_LINE_BYTES ? Buffer.byteLength(raw) : 0) : raw.tooLong;
    if (tooLong > IMPORT_MAX_LINE_BYTES) {
      result.lines++;
      result.failed.push({ line: lineNo, error: `line of ${tooLong} bytes is over the ${IMPORT_MAX_LINE_BYTES / (1024 * 1024)} MiB limit` });
      continue;
    }
    const line = (raw as string).trim();
    if (line.length === 0) continue;
    result.lines++;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      result.failed.push({ line: lineNo, error: 'not valid JSON' });
      continue;
    }
    const parsed = importLineSchema.safeParse(json);
    if (!parsed.success) {
      result.failed.push({ line: lineNo, error: describeZodError(parsed.error) });
      continue;
    }
    const createdAt = parseTime(parsed.data.createdAt);
    if (createdAt === 'bad') {
      result.failed.push({ line: lineNo, error: 'createdAt: not a date' });
      continue;
    }
    try {
      const rest = parsed.data;
      const previousTurn = conversation.next(rest.provenance, rest.text);
      const context = rest.context !== undefined ? rest.context : previousTurn;
      const { memory } = prepareMemory(deps, {
        text: rest.text,
        ...(rest.kind ? { kind: rest.kind } : {}),
        ...(rest.tags ? { tags: rest.tags } : {}),
        ...(rest.scope ? { scope: rest.scope } : {}),
        ...(rest.project !== undefined ? { project: rest.project } : {}),
        ...(rest.importance !== undefined ? { importance: rest.importance } : {}),
        ...(createdAt !== undefined ? { createdAt } : {}),
        ...(rest.meta ? { meta: rest.meta } : {}),
        ...(rest.provenance ? { provenance: stripUndefined(rest.provenance) } : {}),
        ...(context !== null ? { context } : {}),
        source: 'import',
      });
      chunk.push({ line: lineNo, memory });
      chunkChars += memory.text.length + (memory.context?.length ?? 0);
    } catch (error) {
      if (!isCairnError(error) || !error.isUserError) throw error;
      result.failed.push({ line: lineNo, error: error.message });
      continue;
    }
    if (chunk.length >= chunkMemories || chunkChars >= CHUNK_CHARS) await flush();
  }
  await flush();
  result.failed.sort((a, b) => a.line - b.line);
  return result;
}

/**
 * Write one chunk: vectors first (outside the transaction, in one batch, for memories not
 * already stored), then every memory in one transaction. When the store cannot batch, or the
 * batch fails on one memory's user error, the chunk is written one memory at a time.
 */
async function writeChunk(deps: Deps, chunk: Array<{ line: number; memory: Memory }>, result: ImportResult): Promise<void> {
  const vectors = await vectorsFor(deps, chunk.map((item) => item.memory));
  const writes = chunk.map((item, i) => memoryWrite(deps, item.memory, vectors[i] ?? null));
  const at = deps.clock.now();
  if (deps.store.writeMemories) {
    try {
      for (const written of await deps.store.writeMemories(writes, { touchDuplicatesAt: at })) {
        if (written.inserted) result.imported++;
        else result.duplicates++;
      }
      return;
    } catch (error) {
      if (!isCairnError(error) || !error.isUserError) throw error;
      // Rolled back as a whole: find the memory at fault by writing them one at a time.
    }
  }
  for (const [i, write] of writes.entries()) {
    try {
      const written = await deps.store.writeMemory(write);
      if (written.inserted) result.imported++;
      else {
        await deps.store.touch([written.memory.id], at, false);
        result.duplicates++;
      }
    } catch (error) {
      if (!isCairnError(error) || !error.isUserError) throw error;
      result.failed.push({ line: chunk[i]?.line ?? 0, error: error.message });
    }
  }
}

/** Vectors for the memories not already stored, embedded in one batch (null without an embedder). */
async function vectorsFor(deps: Deps, memories: Memory[]): Promise<Array<Float32Array | null>> {
  if (!deps.embedder || deps.deferVectors) return memories.map(() => null);
  const fresh: number[] = [];
  for (const [i, memory] of memories.entries()) if (!(await deps.store.findByContentHash(memory.contentHash, memory.project))) fresh.push(i);
  const embedded = await embedAll(
    deps,
    fresh.map((i) => embeddingText(memories[i] as Memory)),
  );
  const out: Array<Float32Array | null> = memories.map(() => null);
  fresh.forEach((index, k) => (out[index] = embedded[k] ?? null));
  return out;
}
