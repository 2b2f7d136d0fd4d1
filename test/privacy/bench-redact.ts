/**
 * Redaction throughput on real transcripts: every line of ../shared/data/transcripts (JSONL, so
 * tool input is escaped JSON as ingest sees it) through `sanitize`, 7 rounds, median MB/s.
 * Also counts what was redacted, by kind, so a rule that fires on ordinary text shows up.
 *
 *   nice -n 10 npx vite-node test/privacy/bench-redact.ts [dir]
 *
 * Not a vitest file: it needs ../shared (absent in CI) and prints figures, it asserts nothing.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sanitize } from '../../src/privacy/redact.js';

const root = resolve(process.argv[2] ?? join(import.meta.dirname, '../../../shared/data/transcripts'));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return /\.(jsonl|json|md|txt)$/.test(name) ? [path] : [];
  });
}

const lines = files(root).flatMap((f) => readFileSync(f, 'utf8').split('\n'));
const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l), 0);
const found: Record<string, number> = {};
for (const line of lines) for (const [kind, n] of Object.entries(sanitize(line).found)) found[kind] = (found[kind] ?? 0) + n;

const rounds: number[] = [];
for (let r = 0; r < 7; r++) {
  const start = process.hrtime.bigint();
  let sink = 0;
  for (const line of lines) sink += sanitize(line).text.length;
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (sink < 0) console.log(sink);
  rounds.push(bytes / 1e6 / (ms / 1000));
}
rounds.sort((a, b) => a - b);
console.log(`${lines.length} lines, ${(bytes / 1e6).toFixed(1)} MB from ${root}`);
console.log(`sanitize: median ${rounds[3]?.toFixed(1)} MB/s (min ${rounds[0]?.toFixed(1)}, max ${rounds[6]?.toFixed(1)})`);
console.log(`redacted: ${JSON.stringify(Object.fromEntries(Object.entries(found).sort((a, b) => b[1] - a[1])))}`);
