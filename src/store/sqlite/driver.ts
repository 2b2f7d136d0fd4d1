import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';

/**
 * better-sqlite3 through `require`, not `import`: Node's ESM loader parses a CommonJS module's
 * source for its export names before running it; the hooks pay that on every prompt. The hooks
 * bundle (scripts/bundle-hooks.mjs) puts better-sqlite3's JavaScript inside itself in place of
 * this module, so a hook does not resolve and compile its 13 files one by one.
 */
export const BetterSqlite3 = createRequire(import.meta.url)('better-sqlite3') as typeof Database;
