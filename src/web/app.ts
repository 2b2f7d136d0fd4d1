/**
 * The memory browser's HTTP app (SPEC §5.5): a JSON API under /api and a single page with no
 * build step, both behind the token of `cairn ui`. Tests drive it in-process with
 * `app.request()`; `startUi` (server.ts) serves it on loopback.
 */
import { Hono } from 'hono';
import type { Cairn } from '../cairn.js';
import { CairnError } from '../errors.js';
import { DEFAULT_MAX_BODY_BYTES, limitBody } from '../serve/body-limit.js';
import { requireToken, TOKEN_HEADER } from './auth.js';
import { errorResponse } from './http.js';
import { changeRoutes } from './routes/changes.js';
import { insightRoutes } from './routes/insights.js';
import { memoryRoutes } from './routes/memories.js';
import { overviewRoutes } from './routes/overview.js';
import { reviewRoutes } from './routes/review.js';
import { sessionRoutes } from './routes/sessions.js';
import { createWebState } from './state.js';
import { loadStatic, STATIC_DIR } from './static.js';

export interface WebAppOptions {
  /** The secret every request must carry (URL once, then the cookie; changes also in the `X-Cairn-Token` header). */
  token: string;
  /**
   * Cookie holding the token. Cookies are shared across ports, so `startUi` names it per port.
   * @default 'cairn_token'
   */
  cookieName?: string;
  /**
   * Host names accepted in the Host header; anything else is refused (a DNS-rebinding guard).
   * @default ['127.0.0.1', 'localhost', '[::1]']
   */
  hosts?: string[];
  /** Folder of the page's files. @default src/web/static of this package */
  staticDir?: string;
  /**
   * Start the background work the overview needs (the catalog scan) shortly after start rather
   * than on first use. `startUi` sets it.
   * @default false
   */
  warm?: boolean;
  /**
   * Largest request body accepted, checked before the token: larger ones get 413.
   * @default DEFAULT_MAX_BODY_BYTES (1 MiB)
   */
  maxBodyBytes?: number;
  /**
   * The cairn home, where the overview reads the latest bench results and the hook log from.
   * @default null (the overview says there is nothing to show)
   */
  home?: string | null;
}

const WARM_DELAY_MS = 5000;

/** Content-Security-Policy: only this origin's scripts and styles; no inline script, no framing. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function escapeAttribute(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** Build the browser's app over `cairn`. */
export function createWebApp(cairn: Cairn, options: WebAppOptions): Hono {
  if (options.token.length < 16) throw new CairnError('INVALID_INPUT', 'the token must be at least 16 characters', { field: 'token' });
  const app = new Hono();
  const files = loadStatic(options.staticDir ?? STATIC_DIR);
  const state = createWebState(cairn, options.home ?? null);
  if (options.warm) {
    // After the first page has had time to load: the scan competes with it for the event loop.
    setTimeout(() => {
      state.catalog.build().catch((error: unknown) => cairn.deps.logger.warn('ui: catalog scan failed', { error: String(error) }));
    }, WARM_DELAY_MS).unref();
  }

  app.onError((error, c) => {
    const { status, body } = errorResponse(error);
    if (status === 500) cairn.deps.logger.error('ui: request failed', { path: c.req.path, error: body.error.message });
    return c.json(body, status);
  });
  app.notFound((c) => c.json({ error: { code: 'NOT_FOUND', message: `no route ${c.req.method} ${c.req.path}`, field: null } }, 404));

  // Before the token check: no caller can make the server hold a large body.
  app.use('*', limitBody(options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES));
  app.use('*', async (c, next) => {
    await next();
    c.header('Content-Security-Policy', CSP);
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('X-Frame-Options', 'DENY');
    c.header('Referrer-Policy', 'no-referrer');
    c.header('Cross-Origin-Opener-Policy', 'same-origin');
    c.header('Cross-Origin-Resource-Policy', 'same-origin');
    if (c.req.path.startsWith('/api/')) c.header('Cache-Control', 'no-store');
  });
  app.use(
    '*',
    requireToken({
      token: options.token,
      cookieName: options.cookieName ?? 'cairn_token',
      hosts: new Set(options.hosts ?? ['127.0.0.1', 'localhost', '[::1]']),
    }),
  );

  const api = new Hono();
  for (const routes of [memoryRoutes, changeRoutes, sessionRoutes, reviewRoutes, overviewRoutes, insightRoutes]) routes(api, state);
  app.route('/api', api);

  const index = files.get('/index.html');
  app.get('/', (c) => {
    if (!index) throw new CairnError('INTERNAL', 'the page is missing from this install (src/web/static/index.html)');
    // The page sends the token back in a header on changes; only a request that already holds
    // it (cookie or URL) gets this far, and no other origin can read the response.
    const html = index.body.replace('__CAIRN_TOKEN__', escapeAttribute(options.token)).replace('__CAIRN_TOKEN_HEADER__', TOKEN_HEADER);
    c.header('Cache-Control', 'no-store');
    return c.html(html);
  });
  app.get('/*', (c) => {
    const file = files.get(c.req.path);
    if (!file || c.req.path === '/index.html') return c.notFound();
    c.header('Content-Type', file.type);
    c.header('Cache-Control', 'no-cache');
    return c.body(file.body);
  });
  return app;
}
