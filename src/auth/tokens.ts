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
const LIST_KEY = 'auth.tokens';
const recordKey = (hash: string): string => `auth.token.${hash}`;

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
    const existing = await this.list();
    if (existing.some((t) => t.name === name && t.revokedAt === null)) throw new CairnError('CONFLICT', `a token named "${name}" already exists`, { field: 'name' });
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
    await this.store.setState(recordKey(record.hash), JSON.stringify(record));
    await this.store.setState(LIST_KEY, JSON.stringify([...(await this.hashes()), record.hash]));
    return { token, record: info(record) };
  }

  private async hashes(): Promise<string[]> {
    const raw = await this.store.getState(LIST_KEY);
    return raw === null ? [] : (JSON.parse(raw) as string[]);
  }

  private async byHash(hash: string): Promise<TokenRecord | null> {
    const raw = await this.store.getState(recordKey(hash));
    return raw === null ? null : (JSON.parse(raw) as TokenRecord);
  }

  async list(): Promise<TokenInfo[]> {
    const out: TokenInfo[] = [];
    for (const hash of await this.hashes()) {
      const record = await this.byHash(hash);
      if (record) out.push(info(record));
    }
    return out;
  }

  /** Revoke by id or name; revoking twice is a no-op. */
  async revoke(idOrName: string): Promise<TokenInfo> {
    for (const hash of await this.hashes()) {
      const record = await this.byHash(hash);
      if (!record || (record.id !== idOrName && record.name !== idOrName)) continue;
      if (record.revokedAt !== null && record.id !== idOrName) continue;
      if (record.revokedAt === null) {
        record.revokedAt = this.options.clock.now();
        await this.store.setState(recordKey(hash), JSON.stringify(record));
      }
      return info(record);
    }
    throw notFound(`token ${idOrName}`);
  }

  /** The live record for a presented token, or null (unknown, revoked, or not a cairn token). */
  async verify(token: string): Promise<TokenRecord | null> {
    if (!token.startsWith(PREFIX) || token.length > 200) return null;
    const record = await this.byHash(hashToken(token));
    return record && record.revokedAt === null ? record : null;
  }
}
