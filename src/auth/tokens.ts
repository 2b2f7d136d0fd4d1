/**
 * Access tokens for `cairn serve`: a name, the projects it may touch (`*` for all) and a role
 * (read < write < admin). Only the sha256 of a token is stored, in the store's state, so every
 * server process on one database sees the same tokens; the token itself is shown once.
 */
import { createHash, randomBytes } from 'node:crypto';
import { CairnError, invalid, notFound } from '../errors.js';
import type { Clock, IdSource, Store } from '../types.js';

export const ROLES = ['read', 'write', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Every project. */
export const ALL_PROJECTS = '*';

export interface TokenRecord {
  id: string;
  name: string;
  /** Project identities this token may read or write; `['*']` for all. */
  projects: string[];
  role: Role;
  /** sha256 (hex) of the token string. */
  hash: string;
  createdAt: number;
  revokedAt: number | null;
}

/** A token record without its hash, for listings. */
export type TokenInfo = Omit<TokenRecord, 'hash'>;

const PREFIX = 'cairn_';
/**
 * Every token record, as one JSON array, changed only through `Store.updateState` so concurrent
 * creates and revokes (several `cairn serve` processes, the CLI) never lose each other's entries.
 */
const REGISTRY_KEY = 'auth.registry';
/**
 * The layout before the registry: a list of hashes rewritten on every create (which lost entries
 * under concurrent creates) and one record per hash. Read while there is no registry; the first
 * create or revoke copies it into the registry.
 */
const LEGACY_LIST_KEY = 'auth.tokens';
const legacyRecordKey = (hash: string): string => `auth.token.${hash}`;

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function info({ hash: _hash, ...rest }: TokenRecord): TokenInfo {
  return rest;
}

/** True when `role` may do what `needed` allows (read < write < admin). */
export function allows(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/** True when the token may touch `project` (null: the user scope, only for all-project tokens). */
export function coversProject(token: Pick<TokenRecord, 'projects'>, project: string | null): boolean {
  if (token.projects.includes(ALL_PROJECTS)) return true;
  return project !== null && token.projects.includes(project);
}

export interface TokenStoreOptions {
  clock: Clock;
  ids: IdSource;
}

/** Tokens kept in a store's state: create, list, revoke, and verify a presented token. */
export class TokenStore {
  constructor(
    private readonly store: Store,
    private readonly options: TokenStoreOptions,
  ) {}

  /** Create a token; the returned `token` string is the only time it is shown. */
  async create(input: { name: string; projects: string[]; role: Role }): Promise<{ token: string; record: TokenInfo }> {
    const name = input.name.trim();
    if (!/^[\w.@-]{1,64}$/.test(name)) throw invalid('a token name is 1–64 letters, digits, or . _ - @', 'name');
    if (!ROLES.includes(input.role)) throw invalid(`role must be one of ${ROLES.join(', ')} (got "${String(input.role)}")`, 'role');
    const projects = [...new Set(input.projects.map((p) => p.trim()).filter(Boolean))];
    if (projects.length === 0) throw invalid('give the projects the token may use (--projects a,b, or * for all)', 'projects');
    const token = PREFIX + randomBytes(32).toString('base64url');
    const record: TokenRecord = {
      id: this.options.ids.next(),
      name,
      projects,
      role: input.role,
      hash: hashToken(token),
      createdAt: this.options.clock.now(),
      revokedAt: null,
    };
    await this.updateRegistry((records) => {
      if (records.some((t) => t.name === name && t.revokedAt === null)) {
        throw new CairnError('CONFLICT', `a token named "${name}" already exists`, { field: 'name' });
      }
      records.push(record);
    });
    return { token, record: info(record) };
  }

  async list(): Promise<TokenInfo[]> {
    return (await this.records()).map(info);
  }

  /** Revoke by id or name; revoking twice is a no-op. */
  async revoke(idOrName: string): Promise<TokenInfo> {
    let revoked: TokenRecord | null = null;
    await this.updateRegistry((records) => {
      const record = records.find((r) => r.id === idOrName) ?? records.find((r) => r.name === idOrName && r.revokedAt === null);
      if (!record) throw notFound(`token ${idOrName}`);
      record.revokedAt ??= this.options.clock.now();
      revoked = record;
    });
    const record = revoked as TokenRecord | null;
    if (!record) throw notFound(`token ${idOrName}`);
    // A cairn from before the registry verifies through the legacy record: revoke it there too.
    if ((await this.store.getState(legacyRecordKey(record.hash))) !== null) {
      await this.store.setState(legacyRecordKey(record.hash), JSON.stringify(record));
    }
    return info(record);
  }

  /** The live record for a presented token, or null (unknown, revoked, or not a cairn token). */
  async verify(token: string): Promise<TokenRecord | null> {
    if (!token.startsWith(PREFIX) || token.length > 200) return null;
    const hash = hashToken(token);
    const record = (await this.records()).find((r) => r.hash === hash);
    return record && record.revokedAt === null ? record : null;
  }

  /** Every record, oldest first: the registry, or the legacy layout while there is none. */
  private async records(): Promise<TokenRecord[]> {
    const raw = await this.store.getState(REGISTRY_KEY);
    return raw === null ? this.legacyRecords() : parseRegistry(raw);
  }

  /** Change the records atomically (`change` edits the array in place; it may run more than once). */
  private async updateRegistry(change: (records: TokenRecord[]) => void): Promise<void> {
    // Read the legacy layout first: the update runs in a transaction and cannot await.
    const legacy = (await this.store.getState(REGISTRY_KEY)) === null ? JSON.stringify(await this.legacyRecords()) : '[]';
    await this.store.updateState(REGISTRY_KEY, (raw) => {
      const records = parseRegistry(raw ?? legacy);
      change(records);
      return JSON.stringify(records);
    });
  }

  private async legacyRecords(): Promise<TokenRecord[]> {
    const list = await this.store.getState(LEGACY_LIST_KEY);
    const out: TokenRecord[] = [];
    for (const hash of list === null ? [] : (JSON.parse(list) as string[])) {
      const raw = await this.store.getState(legacyRecordKey(hash));
      if (raw !== null) out.push(JSON.parse(raw) as TokenRecord);
    }
    return out;
  }
}

function parseRegistry(raw: string): TokenRecord[] {
  try {
    const records: unknown = JSON.parse(raw);
    if (Array.isArray(records)) return records as TokenRecord[];
  } catch (error) {
    throw new CairnError('STORE_FAILED', `the token registry (state key ${REGISTRY_KEY}) is not valid JSON`, { cause: error });
  }
  throw new CairnError('STORE_FAILED', `the token registry (state key ${REGISTRY_KEY}) is not a list`);
}
