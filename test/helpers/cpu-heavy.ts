import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** Older than this, a lock is left over from another run whose pids were reused. */
const STALE_MS = 30 * 60_000;

/**
 * One CPU-heavy test file at a time. Files that keep the cores busy with processes of their own
 * (several `cairn` writers at once, kill -9 loops) call this at the top, so that with two test
 * workers (vitest.config.ts) two of them never run at the same time — on 2 loaded cores they then
 * slowed each other past their timeouts — while each still runs beside files that mostly wait.
 * The lock is a file named after the vitest process (the parent of every test fork; each file has
 * its own fork), held until the file's tests are done; a holder that died without releasing it
 * is skipped.
 */
export async function oneCpuHeavyFileAtATime(): Promise<void> {
  const path = join(tmpdir(), `cairn-vitest-cpu-heavy-${process.ppid}.lock`);
  const me = String(process.pid);
  for (;;) {
    try {
      writeFileSync(path, me, { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let holder = '';
    let age = 0;
    try {
      holder = readFileSync(path, 'utf8');
      age = Date.now() - statSync(path).mtimeMs;
    } catch {
      continue; // released meanwhile
    }
    // Its holder is gone, or the lock is older than any run of one file (a reused pid).
    if ((holder !== '' && !alive(Number(holder))) || age > STALE_MS) {
      rmSync(path, { force: true });
      continue;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const release = () => {
    try {
      if (readFileSync(path, 'utf8') === me) rmSync(path, { force: true });
    } catch {
      // already gone
    }
  };
  afterAll(release);
  process.once('exit', release);
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return true; // being written: wait
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
