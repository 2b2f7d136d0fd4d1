import { z } from 'zod';
import { KINDS, SCOPES } from '../types.js';

/**
 * Input schemas of the operations, shared by the MCP tools and the HTTP API (one schema per
 * boundary). Descriptions are written for the agent that reads them.
 */
export const rememberInput = {
  text: z.string().min(1).max(8192).describe('The finding to keep, exact: signatures, path:line, commands, invariants, decisions, corrections.'),
  kind: z.enum(KINDS).optional().describe('fact | decision | preference | procedure | correction | entity | continuation | note (default note)'),
  tags: z.array(z.string().min(1).max(64)).max(32).optional().describe('Short topic tags'),
  priority: z.enum(['high', 'medium', 'low']).optional().describe('Importance sugar: high 0.9, medium 0.6, low 0.3'),
  scope: z.enum(SCOPES).optional().describe('session (this task), project (this repo; default), user (all projects)'),
  files: z.array(z.string()).optional().describe('Files this is about, as path or path:line (paths in the text are found too)'),
  supersedes: z.string().optional().describe('Id of a memory this replaces'),
  context: z
    .string()
    .max(8192)
    .optional()
    .describe('What this answers, e.g. the question or request it replies to: searched with the text, never shown as the memory'),
};

export const recallInput = {
  query: z.string().min(1).max(2000).describe('What you need: identifiers, file names, or a plain question'),
  k: z.number().int().min(1).max(50).optional().describe('How many results (default 8)'),
  tags: z.array(z.string()).optional().describe('Only memories with any of these tags'),
  kinds: z.array(z.enum(KINDS)).optional().describe('Only these kinds'),
  scopes: z.array(z.enum(SCOPES)).optional().describe('Only these scopes'),
  asOf: z.string().optional().describe('Recall as of a snapshot label'),
  rerank: z.boolean().optional().describe('Reorder the first 10 hits by comparing them with the query word by word (default on with a local model; false turns it off)'),
};

export const forgetInput = {
  ids: z.array(z.string().min(1)).min(1).max(100).describe('Memory ids to forget (soft delete; restorable)'),
  reason: z.string().max(500).optional().describe('Why, kept in the audit log'),
};

export const reviseInput = {
  id: z.string().min(1).describe('Id of the memory to replace'),
  text: z.string().min(1).max(8192).describe('The corrected text; the old version is kept in history'),
};

export const snapshotInput = {
  label: z.string().min(1).max(100).describe('A name for the checkpoint, e.g. before-refactor'),
};

export const statusInput = {};

export const contextInput = {
  query: z.string().max(2000).optional().describe('What you are about to work on; omit for the project and session overview'),
  budget: z.number().int().min(50).max(20000).optional().describe('Token budget (default 1500)'),
  ranker: z.string().optional().describe('composite (default), recency, importance, bm25, cosine or random'),
};

export const historyInput = {
  query: z.string().min(1).max(2000).describe('Words to find in past transcript turns, e.g. "flaky test retry"'),
  sessionId: z.string().optional().describe('Only this session'),
  roles: z.array(z.enum(['user', 'assistant', 'tool_call', 'tool_result', 'system', 'summary'])).optional().describe('Only these roles'),
  sinceDays: z.number().min(0).max(3650).optional().describe('Only turns from the last N days'),
  limit: z.number().int().min(1).max(50).optional().describe('How many turns (default 10)'),
  allProjects: z.boolean().optional().describe('Search every project, not just this one'),
};
