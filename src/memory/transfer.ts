import { z } from 'zod';
import { isCairnError } from '../errors.js';
import type { Deps } from '../deps.js';
import { KINDS, SCOPES } from '../types.js';
import { IMPORT_MAX_LINE_BYTES, type LineTooLong } from './bounded-lines.js';
import { remember } from './remember.js';
import { ConversationContext } from './context.js';

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

/**
 * Import memories from JSONL text, one memory per line. Bad lines are reported with their line
 * number and skipped; the rest are imported. Each memory is written in its own transaction and
 * keyed by content hash, so a killed import leaves a consistent store and a re-run adds no
 * duplicates.
 */
export async function importJsonl(
  deps: Deps,
  lines: AsyncIterable<string | LineTooLong> | Iterable<string | LineTooLong>,
  onProgress?: (done: number) => void,
): Promise<ImportResult> {
  const result: ImportResult = { lines: 0, imported: 0, duplicates: 0, failed: [] };
  let lineNo = 0;
  const conversation = new ConversationContext();
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
      const written = await remember(deps, {
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
      if (written.created) result.imported++;
      else result.duplicates++;
    } catch (error) {
      if (!isCairnError(error) || !error.isUserError) throw error;
      result.failed.push({ line: lineNo, error: error.message });
    }
    onProgress?.(lineNo);
  }
  return result;
}
