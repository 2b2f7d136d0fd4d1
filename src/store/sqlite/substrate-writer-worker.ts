/**
 * The substrate's write thread (./substrate-writer.ts posts to it): its own connection to the
 * database file the calling thread opened (WAL, the same pragmas and busy timeout, the schema as
 * it is), and for each posted group of batches what `writeSubstrate` does in the calling thread:
 * one transaction for the group, or one per batch when the group is refused
 * (`SqliteSubstrate.commitBatches`), every turn's and fact's index terms computed here. It answers
 * with each batch's outcome, in order.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import type { SubstrateBatch, TurnRole } from '../../types.js';
import { factIndexText, turnIndexText } from '../substrate-rows.js';
import { openDatabase } from './database.js';
import { createSqliteSubstrate, type SqliteSubstrate } from './substrate.js';

/** What the worker is given. */
export interface SubstrateWriterData {
  path: string;
  busyTimeoutMs: number;
  /** Where to answer (a channel of its own: the caller reads it to the end if this thread dies). */
  replies: MessagePort;
}

/** A group of batches to commit, or the end. */
export type WriteRequest = { type: 'write'; id: number; batches: SubstrateBatch[] } | { type: 'close' };

/** One batch's outcome: the turns it added, or why it was refused (SQLite's code kept). */
export type WriteOutcome = { turnsAdded: number } | { error: { message: string; code: string | null } };

/** What the worker answers on `replies`: a group's outcomes, or why it stops (a database it cannot open, a group it cannot receive). */
export type WriteReply = { type: 'done'; id: number; outcomes: WriteOutcome[] } | { type: 'failed'; error: string };

/**
 * Texts with the shapes real sessions hold (prose in Latin-1, CJK and emoji, camelCase and
 * snake_case, paths, URLs, versions, tool output), for {@link warmUp}.
 */
const WARM_TEXTS: ReadonlyArray<readonly [TurnRole, string | null, string]> = [
  ['user', null, 'Fix the flaky test in src/lib/parseConfig.test.ts:42 — it fails on café, naïve and Straße (İstanbul too).'],
  ['user', null, '数据库连接失败了，请检查 config.yaml 🚀 ✅ «quote» “smart” … and run `npm test -- --grep "tokenizer"`'],
  ['assistant', null, "You're right — I'll restore getURLForID in src/server/http_server.ts; XMLHttpRequest is not defined in Node 20.11.1."],
  ['tool_call', 'Bash', '{"command":"cd packages/core && npm test -- --grep \\"parseConfig\\" 2>&1 | tail -20"}'],
  [
    'tool_result',
    'Read',
    '     1→import { readFileSync } from "node:fs";\n     2→export const WORD = /[a-z_]+/g;\n     3→export function parseConfig(path: string): Config {\n' +
      'a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t.ts a_b_c_d_e_f_g_h_i_j_k_l_m_n_o_p_q_r  See https://example.com/docs/v1.2.3-beta.4#api and issue #123.\n' +
      "AssertionError: expected [ 'a' ] to deeply equal [ 'a_' ]\n    at /home/dev/my_app/test/parser.test.ts:17:23\n" +
      'x'.repeat(3_000),
  ],
];

/**
 * Compute index terms for the texts above a few times before the first group arrives, as the
 * reading thread's warm-up does for its own code (src/ingest/warmup.ts): this isolate compiles
 * the tokenizer once on them, not on the first files' megabytes while the reading thread waits.
 */
function warmUp(): void {
  for (let round = 0; round < 3; round++) {
    for (const [role, toolName, text] of WARM_TEXTS) {
      turnIndexText({ role, toolName, text });
      factIndexText({ text: text.slice(0, 80) });
    }
  }
}

const port = parentPort;
if (port !== null) {
  const { path, busyTimeoutMs, replies } = workerData as SubstrateWriterData;
  let db: Database.Database | null = null;
  let substrate: SqliteSubstrate | null = null;
  try {
    db = openDatabase(path, { busyTimeoutMs, migrate: false });
    substrate = createSqliteSubstrate(db);
  } catch (error) {
    replies.postMessage({ type: 'failed', error: `cannot open ${path}: ${error instanceof Error ? error.message : String(error)}` } satisfies WriteReply);
    db?.close();
    port.close();
  }
  if (substrate !== null) {
    const writer = substrate;
    warmUp();
    // A group that cannot be read here is never answered: stop, so the calling thread fails what is in flight.
    port.on('messageerror', (error) => {
      replies.postMessage({ type: 'failed', error: `a group could not be received: ${error.message}` } satisfies WriteReply);
      db?.close();
      port.close();
    });
    port.on('message', (request: WriteRequest) => {
      if (request.type === 'close') {
        db?.close();
        port.close();
        return;
      }
      const outcomes = writer.commitBatches(request.batches).map((outcome): WriteOutcome => {
        if ('turnsAdded' in outcome) return outcome;
        const error = outcome.error as { message?: unknown; code?: unknown } | null;
        return { error: { message: typeof error?.message === 'string' ? error.message : String(outcome.error), code: typeof error?.code === 'string' ? error.code : null } };
      });
      replies.postMessage({ type: 'done', id: request.id, outcomes } satisfies WriteReply);
    });
  }
}
