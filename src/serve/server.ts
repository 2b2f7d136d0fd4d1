/**
 * Run `cairn serve`: the serve app on a TCP port. Loopback by default; another address only
 * when tokens exist (the server refuses to start otherwise). On loopback with no tokens stored,
 * a one-off admin token for this process is made and returned, like `cairn ui`'s.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { ALL_PROJECTS, type TokenRecord, type TokenStore } from '../auth/tokens.js';
import { CairnError } from '../errors.js';
import { createServeApp, type ServeAppOptions } from './app.js';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 7411;

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

export interface ServeOptions extends Omit<ServeAppOptions, 'localTokens' | 'tokens'> {
  tokens: TokenStore;
  /** @default 7411; 0 picks a free port */
  port?: number;
  /** @default 127.0.0.1 */
  host?: string;
}

export interface RunningServer {
  url: string;
  port: number;
  host: string;
  /** The one-off admin token made for this process (loopback, no stored tokens), else null. */
  localToken: string | null;
  close(): Promise<void>;
}

export async function startServe(options: ServeOptions): Promise<RunningServer> {
  const host = options.host ?? DEFAULT_HOST;
  const live = (await options.tokens.list()).filter((t) => t.revokedAt === null);
  let localToken: string | null = null;
  const localTokens: ServeAppOptions['localTokens'] = [];
  if (live.length === 0) {
    if (!isLoopback(host)) {
      throw new CairnError(
        'INVALID_INPUT',
        `refusing to listen on ${host} without access tokens: create one first with \`cairn token create --name NAME --projects P --role write\``,
        { field: 'host' },
      );
    }
    localToken = `cairn_${randomBytes(32).toString('base64url')}`;
    const record: TokenRecord = { id: 'local', name: 'local', projects: [ALL_PROJECTS], role: 'admin', hash: '', createdAt: Date.now(), revokedAt: null };
    localTokens.push({ token: localToken, record });
  }
  const app = createServeApp({ ...options, localTokens });
  let server: ServerType | null = null;
  const port = await new Promise<number>((resolve, reject) => {
    server = serve({ fetch: app.fetch, port: options.port ?? DEFAULT_PORT, hostname: host }, (info: AddressInfo) => resolve(info.port));
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new CairnError('INVALID_INPUT', `port ${options.port} is in use; pick another with --port`, { field: 'port', cause: error })
          : error,
      );
    });
  });
  const running = server as unknown as ServerType;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    port,
    host,
    localToken,
    close: () =>
      new Promise<void>((resolve) => {
        if ('closeAllConnections' in running && typeof running.closeAllConnections === 'function') running.closeAllConnections();
        running.close(() => resolve());
      }),
  };
}
