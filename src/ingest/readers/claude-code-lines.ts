/**
 * Claude Code transcript line types that carry nothing cairn keeps, shared by the reader
 * (src/ingest/readers/claude-code.ts) and the post-compact tail (src/hooks/compact-tail.ts), which
 * must agree on what ingest stores nothing from. A small module: the hook imports it without the
 * reader.
 */

/**
 * Written by Claude Code 2.1.3xx beside the conversation: the API request log (`api-request`,
 * its shape and message blobs, up to ~60 KB a line), cost and tool-use tallies, and latches.
 * The conversation itself still arrives as `user`, `assistant` and `system` lines.
 */
export const REQUEST_LOG_TYPES: readonly string[] = ['api-request', 'api-request-shape', 'api-request-blob', 'cost-state', 'tools-used', 'atis-latch'];

/** Line types the reader passes over whole, as bookkeeping. */
export const PASSED_OVER_TYPES: ReadonlySet<string> = new Set(['progress', 'file-history-snapshot', 'attachment', 'agent-name', 'pr-link', ...REQUEST_LOG_TYPES]);

/**
 * The line types the reader reads; it stores nothing from any other (it counts them as unknown
 * or passes them over), so a type a newer client adds is nothing to the post-compact tail either.
 */
export const READ_TYPES: ReadonlySet<string> = new Set(['assistant', 'user', 'system', 'queue-operation', 'summary', 'custom-title']);
