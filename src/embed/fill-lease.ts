/**
 * The lease that lets one process at a time fill the vector index (the background fill after an
 * ingest, the MCP server when idle, `cairn reindex`). It lives in the store's state table and is
 * taken and renewed with `updateState` (one atomic read-modify-write), so it works across
 * processes on SQLite and across hosts on PostgreSQL.
 *
 * A holder renews it after every batch. It is free again when released, when its heartbeat is
 * older than the TTL, or at once when its holder ran on this host and that process is gone (a
 * `kill -9`): the next filler takes over and continues where the dead one stopped, since only
 * memories still without a vector are ever embedded.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { processAlive } from '../runtime.js';
import type { Store } from '../types.js';

/** State key of the lease. */
export const FILL_LEASE_KEY = 'vector_fill';

/**
 * How long a lease without a heartbeat stays valid when its holder cannot be checked (another
 * host). A batch takes well under a second on an idle machine; a minute covers a loaded one.
 */
export const FILL_LEASE_TTL_MS = 60_000;

/** Who fills, and how far it got (what `cairn status` shows). */
export interface FillLease {
  /** Unique per filler run. */
  holder: string;
  pid: number;
  host: string;
  /** `cli reindex`, `ingest`, `mcp` … */
  by: string;
  /** The embedder id the holder writes. */
  model: string;
  startedAt: number;
  heartbeatAt: number;
  /** Vectors written in this run so far. */
  done: number;
}

/** The process facts a lease depends on, injected for tests. */
export interface LeaseEnvironment {
  now(): number;
  pid: number;
  host: string;
  /** Whether a process of this host is still running. */
  isAlive(pid: number): boolean;
  ttlMs: number;
}

/** The real process environment. */
export function defaultLeaseEnvironment(): LeaseEnvironment {
  return { now: Date.now, pid: process.pid, host: os.hostname(), isAlive: processAlive, ttlMs: FILL_LEASE_TTL_MS };
}

function parseLease(raw: string | null): FillLease | null {
  if (!raw) return null;
  try {
    const value = JSON.parse(raw) as Partial<FillLease>;
    if (typeof value.holder !== 'string' || typeof value.pid !== 'number' || typeof value.heartbeatAt !== 'number') return null;
    return value as FillLease;
  } catch {
    return null;
  }
}

/** True when `lease` still binds others: fresh heartbeat and, on this host, a live process. */
export function leaseIsLive(lease: FillLease, env: LeaseEnvironment): boolean {
  if (env.now() - lease.heartbeatAt > env.ttlMs) return false;
  if (lease.host === env.host && !env.isAlive(lease.pid)) return false;
  return true;
}

/** The live lease, if a filler holds one (a dead or expired one reads as none). */
export async function readFillLease(store: Store, env: LeaseEnvironment = defaultLeaseEnvironment()): Promise<FillLease | null> {
  const lease = parseLease(await store.getState(FILL_LEASE_KEY));
  return lease && leaseIsLive(lease, env) ? lease : null;
}

/** A lease this process holds. */
export interface HeldLease {
  readonly holder: string;
  /** Record progress; false when the lease was lost (taken over after a stall): stop filling. */
  renew(done: number): Promise<boolean>;
  /** Give it up (no-op when it was lost). */
  release(): Promise<void>;
}

/**
 * Take the lease for `model`, or get the live lease of whoever holds it.
 *
 * @example
 * const taken = await acquireFillLease(store, 'onnx:all-minilm-l6-v2-q', 'ingest');
 * if ('busy' in taken) console.log(`pid ${taken.busy.pid} is filling`);
 */
export async function acquireFillLease(store: Store, model: string, by: string, env: LeaseEnvironment = defaultLeaseEnvironment()): Promise<{ lease: HeldLease } | { busy: FillLease }> {
  const holder = randomUUID();
  let busy: FillLease | null = null;
  const now = env.now();
  await store.updateState(FILL_LEASE_KEY, (raw) => {
    const current = parseLease(raw);
    if (current && leaseIsLive(current, env)) {
      busy = current;
      return raw;
    }
    busy = null;
    const mine: FillLease = { holder, pid: env.pid, host: env.host, by, model, startedAt: now, heartbeatAt: now, done: 0 };
    return JSON.stringify(mine);
  });
  if (busy) return { busy };
  let lost = false;
  return {
    lease: {
      holder,
      async renew(done) {
        if (lost) return false;
        await store.updateState(FILL_LEASE_KEY, (raw) => {
          const current = parseLease(raw);
          lost = current?.holder !== holder;
          return lost || !current ? raw : JSON.stringify({ ...current, heartbeatAt: env.now(), done });
        });
        return !lost;
      },
      async release() {
        await store.updateState(FILL_LEASE_KEY, (raw) => (parseLease(raw)?.holder === holder ? null : raw));
      },
    },
  };
}
