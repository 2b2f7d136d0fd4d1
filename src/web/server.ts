/**
 * Serve the memory browser on the loopback interface with a fresh random token.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Cairn } from '../cairn.js';
import { CairnError } from '../errors.js';
import { createWebApp } from './app.js';

export interface UiOptions {
  /** TCP port; 0 picks a free one. @default 0 */
  port?: number;
  /** @default a new random token (32 bytes, base64url) */
  token?: string;
  /** The cairn home (bench results, hook log) the overview reads. @default null */
  home?: string | null;
}

export interface RunningUi {
  /** The URL to open, token included. */
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

/** The only address the browser's server listens on. */
export const UI_HOST = '127.0.0.1';

export async function startUi(cairn: Cairn, options: UiOptions = {}): Promise<RunningUi> {
  const token = options.token ?? randomBytes(32).toString('base64url');
  let app: Hono | null = null;
  let server: ServerType | null = null;
  const port = await new Promise<number>((resolve, reject) => {
    const fetch = (request: Request): Response | Promise<Response> => (app ? app.fetch(request) : new Response('starting', { status: 503 }));
    server = serve({ fetch, port: options.port ?? 0, hostname: UI_HOST }, (info: AddressInfo) => {
      // Cookies are not port-specific: name this one by port so two browsers side by side keep theirs.
      app = createWebApp(cairn, { token, cookieName: `cairn_token_${info.port}`, warm: true, home: options.home ?? null });
      resolve(info.port);
    });
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new CairnError('INVALID_INPUT', `port ${options.port} is in use; pick another with --port`, { field: 'port', cause: error })
          : error,
      );
    });
  });
  const running = server as unknown as ServerType;
  return {
    url: `http://${UI_HOST}:${port}/?token=${token}`,
    port,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        if ('closeAllConnections' in running && typeof running.closeAllConnections === 'function') running.closeAllConnections();
        running.close(() => resolve());
      }),
  };
}
