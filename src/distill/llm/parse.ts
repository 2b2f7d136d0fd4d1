/**
 * Reading what a model answered: the first JSON value in the text (code fences and chatter
 * around it tolerated), checked against a schema. Anything else is `malformed` — and a malformed
 * answer changes no memory.
 */
import { z } from 'zod';
import { SCOPES } from '../../types.js';
import { LlmError } from './types.js';

/** The first balanced `{…}` or `[…]` in a text, parsed. */
export function extractJson(text: string): unknown {
  const unfenced = text.replace(/```(?:json)?/gi, ' ');
  for (let start = 0; start < unfenced.length; start++) {
    const open = unfenced[start];
    if (open !== '{' && open !== '[') continue;
    const close = open === '{' ? '}' : ']';
    let depth = 0;
    let inString = false;
    for (let i = start; i < unfenced.length; i++) {
      const ch = unfenced[i];
      if (inString) {
        if (ch === '\\') i++;
        else if (ch === '"') inString = false;
        continue;
      }
      if (ch === '"') inString = true;
      else if (ch === open) depth++;
      else if (ch === close && --depth === 0) {
        try {
          return JSON.parse(unfenced.slice(start, i + 1)) as unknown;
        } catch {
          break;
        }
      }
    }
  }
  throw new LlmError('malformed', `the model answered without JSON: ${text.slice(0, 120)}`);
}

const STORED_KINDS = ['fact', 'decision', 'preference', 'procedure', 'correction', 'entity', 'continuation', 'note'] as const;

export const observationSchema = z.object({
  text: z.string().trim().min(1).max(1200),
  kind: z.enum(STORED_KINDS),
  scope: z.enum(SCOPES),
  tags: z.array(z.string().max(40)).max(8).optional(),
});
export type Observation = z.infer<typeof observationSchema>;

/** Observations in an answer: the valid ones kept, the invalid ones counted. */
export function parseObservations(text: string): { observations: Observation[]; invalid: number } {
  const value = extractJson(text);
  const list = Array.isArray(value) ? value : typeof value === 'object' && value !== null && Array.isArray((value as { facts?: unknown }).facts) ? (value as { facts: unknown[] }).facts : null;
  if (list === null) throw new LlmError('malformed', 'the observer answer has no "facts" list');
  const observations: Observation[] = [];
  let invalid = 0;
  for (const item of list.slice(0, 20)) {
    const parsed = observationSchema.safeParse(item);
    if (parsed.success) observations.push(parsed.data);
    else invalid++;
  }
  return { observations, invalid };
}

export const judgmentSchema = z.object({
  action: z.enum(['ADD', 'UPDATE', 'DELETE', 'NOOP']),
  id: z.string().optional(),
  text: z.string().trim().min(1).max(1200).optional(),
  reason: z.string().max(500).optional(),
});
export type Judgment = z.infer<typeof judgmentSchema>;

export function parseJudgment(text: string): Judgment {
  const parsed = judgmentSchema.safeParse(extractJson(text));
  if (!parsed.success) throw new LlmError('malformed', `the judgment does not fit {action, id?, text?}: ${text.slice(0, 120)}`);
  return parsed.data;
}

export const consolidationSchema = z.object({ text: z.string().trim().min(1).max(1200), kind: z.enum(STORED_KINDS).optional() });

export function parseConsolidation(text: string): z.infer<typeof consolidationSchema> {
  const parsed = consolidationSchema.safeParse(extractJson(text));
  if (!parsed.success) throw new LlmError('malformed', `the consolidation does not fit {text, kind?}: ${text.slice(0, 120)}`);
  return parsed.data;
}
