/**
 * `cairn serve`'s HTTP app: MCP over Streamable HTTP at `/mcp` (stateless: a new MCP server and
 * transport per request, so any number of instances can run behind a load balancer on one
 * database) and a JSON API under `/api`. Every request carries `Authorization: Bearer <token>`;
 * each is served by a cairn instance made for that request, confined to the project the request
 * names and the token covers, read-only for read tokens, and recording the token as the actor.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono, type Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { z } from 'zod';
import { ALL_PROJECTS, allows, coversProject, type Role, type TokenRecord, type TokenStore } from '../auth/tokens.js';
import { createCairn, type Cairn } from '../cairn.js';
import { CairnError } from '../errors.js';
import { createMcpServer } from '../mcp/server.js';
import { forgetInput, recallInput, rememberInput } from '../mcp/schemas.js';
import { silentLogger } from '../runtime.js';
import type { Clock, Embedder, EmbedderIdentity, IdSource, Logger, Store } from '../types.js';
import { createWebApp } from '../web/app.js';
import { errorResponse, parseWith } from '../web/http.js';
import { DEFAULT_MAX_BODY_BYTES, limitBody } from './body-limit.js';
import { readOnlyStore } from './read-only.js';
import { ProjectScopedStore } from './scoped-store.js';

/** The header (or `?project=` parameter) naming the project a request works in. */
export const PROJECT_HEADER = 'X-Cairn-Project';
/** Cookies of a browser that opened `/ui?token=…`: the token and the project it chose. */
export const UI_TOKEN_COOKIE = 'cairn_serve_token';
export const UI_PROJECT_COOKIE = 'cairn_serve_project';
/** Memory browsers kept built, by token, project and role. */
const WEB_APPS_KEPT = 32;

export interface ServeAppOptions {
  /** The shared store (opened once per process). */
  store: Store;
  tokens: TokenStore;
  /** @default null (recall on full text alone) */
  embedder?: Embedder | null;
  /** While a model switch is under way, the index's own model for recall (see `CairnOptions.indexEmbedder`); memoize it. */
  indexEmbedder?: (index: EmbedderIdentity) => Promise<Embedder | null>;
  /** Called at the start of every request but `/health` (the idle vector fill waits for a quiet moment). */
  onActivity?: () => void;
  /** Version reported to MCP clients. */
  version: string;
  /**
   * Tokens valid for this process only, never stored (e.g. the one `cairn serve` makes on
   * loopback when none exist).
   */
  localTokens?: Array<{ token: string; record: TokenRecord }>;
  logger?: Logger;
  clock?: Clock;
  ids?: IdSource;
  /**
   * Largest request body accepted, checked before the token: larger ones get 413.
   * @default DEFAULT_MAX_BODY_BYTES (1 MiB)
   */
  maxBodyBytes?: number;
  /**
   * Mount more routes on the app after cairn's (e.g. a browser UI), given a way to build the
   * request's cairn. Called once when the app is built.
   */
  extend?: (app: Hono<ServeEnv>, cairnFor: (c: Context<ServeEnv>) => Cairn) => void;
}

/** What the auth middleware leaves on each request. */
export interface ServeEnv {
  Variables: { token: TokenRecord; project: string | null; cairn: Cairn };
}

function sameSecret(a: string, b: string): boolean {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y);
}

function bearer(c: Context): string | null {
  const header = c.req.header('Authorization') ?? '';
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

/** The project a request names, or the token's only project, or null (all projects, `*` tokens only). */
function requestProject(c: Context, token: TokenRecord, fromCookie = false): string | null {
  const named = (fromCookie ? getCookie(c, UI_PROJECT_COOKIE) : undefined) ?? c.req.header(PROJECT_HEADER) ?? c.req.query('project') ?? null;
  if (named !== null && named !== '') return named;
  const own = token.projects.filter((p) => p !== ALL_PROJECTS);
  if (own.length === 1 && !token.projects.includes(ALL_PROJECTS)) return own[0] as string;
  if (token.projects.includes(ALL_PROJECTS)) return null;
  throw new CairnError('INVALID_INPUT', `this token covers several projects; name one in the ${PROJECT_HEADER} header`, { field: 'project' });
}

async function jsonBody(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new CairnError('INVALID_INPUT', 'the request body is not valid JSON');
  }
}

function need(c: Context<ServeEnv>, role: Role): void {
  const token = c.get('token');
  if (!allows(token.role, role)) throw new CairnError('FORBIDDEN', `token "${token.name}" has role ${token.role}; this needs ${role}`);
}

export function createServeApp(options: ServeAppOptions): Hono<ServeEnv> {
  const app = new Hono<ServeEnv>();
  const logger = options.logger ?? silentLogger;

  app.onError((error, c) => {
    const { status, body } = errorResponse(error);
    if (status === 500) logger.error('serve: request failed', { path: c.req.path, error: body.error.message });
    if (status === 401) c.header('WWW-Authenticate', 'Bearer realm="cairn"');
    return c.json(body, status);
  });
  app.notFound((c) => c.json({ error: { code: 'NOT_FOUND', message: `no route ${c.req.method} ${c.req.path}`, field: null } }, 404));

  if (options.onActivity) {
    const onActivity = options.onActivity;
    // Health checks (a load balancer's, every few seconds) are not activity.
    app.use('*', async (c, next) => {
      if (c.req.path !== '/health') onActivity();
      await next();
    });
  }
  // First of all, before any token is looked at: no caller can make the server hold a large body.
  app.use('*', limitBody(options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES));

  app.get('/health', (c) => c.json({ ok: true }));

  const verify = async (presented: string): Promise<TokenRecord> => {
    const local = options.localTokens?.find((t) => sameSecret(t.token, presented));
    const token = local?.record ?? (await options.tokens.verify(presented));
    if (!token) throw new CairnError('UNAUTHORIZED', 'unknown or revoked token');
    return token;
  };
  const checkProject = (token: TokenRecord, project: string | null): void => {
    if (!coversProject(token, project)) {
      throw new CairnError('FORBIDDEN', project === null ? `token "${token.name}" must name a project` : `token "${token.name}" does not cover project ${project}`);
    }
  };
  const cairnFor = (token: TokenRecord, project: string | null): Cairn => {
    let store: Store = project === null ? options.store : new ProjectScopedStore(options.store, project);
    if (!allows(token.role, 'write')) store = readOnlyStore(store);
    return createCairn({
      store,
      embedder: options.embedder ?? null,
      ...(options.indexEmbedder ? { indexEmbedder: options.indexEmbedder } : {}),
      project,
      actor: `token:${token.name}`,
      logger,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.ids ? { ids: options.ids } : {}),
    });
  };

  /* ------------------------------------------------------------------ memory browser */

  // A browser cannot send a bearer header: `/ui?token=…&project=…` trades the token for
  // HttpOnly SameSite=Strict cookies, then src/web's app serves the page and its API over the
  // same project-scoped (and, for read tokens, read-only) view of the store.
  app.get('/ui', async (c) => {
    const presented = c.req.query('token');
    if (!presented) throw new CairnError('UNAUTHORIZED', 'open /ui?token=<token>[&project=<project>]');
    const token = await verify(presented);
    const project = requestProject(c, token);
    checkProject(token, project);
    const cookie = { httpOnly: true, sameSite: 'Strict' as const, path: '/', secure: new URL(c.req.url).protocol === 'https:' };
    setCookie(c, UI_TOKEN_COOKIE, presented, cookie);
    setCookie(c, UI_PROJECT_COOKIE, project ?? '', cookie);
    return c.redirect('/', 303);
  });
  const webApps = new Map<string, Hono>();
  const webAppFor = (token: TokenRecord, secret: string, project: string | null, hostname: string): Hono => {
    const key = `${token.id}\u0000${token.role}\u0000${project ?? ''}\u0000${hostname}`;
    let web = webApps.get(key);
    if (!web) {
      web = createWebApp(cairnFor(token, project), { token: secret, cookieName: UI_TOKEN_COOKIE, hosts: [hostname] });
      if (webApps.size >= WEB_APPS_KEPT) webApps.delete(webApps.keys().next().value as string);
      webApps.set(key, web);
    }
    return web;
  };

  app.use('*', async (c, next) => {
    const presented = bearer(c);
    if (presented === null) {
      const fromCookie = getCookie(c, UI_TOKEN_COOKIE);
      if (fromCookie) {
        const token = await verify(fromCookie);
        const project = requestProject(c, token, true) || null;
        checkProject(token, project);
        return webAppFor(token, fromCookie, project, new URL(c.req.url).hostname).fetch(c.req.raw);
      }
      throw new CairnError('UNAUTHORIZED', 'send a token: Authorization: Bearer <token> (create one with `cairn token create`)');
    }
    const token = await verify(presented);
    const project = requestProject(c, token);
    checkProject(token, project);
    c.set('token', token);
    c.set('project', project);
    c.set('cairn', cairnFor(token, project));
    await next();
  });

  /* ------------------------------------------------------------------ MCP (stateless) */

  app.post('/mcp', async (c) => {
    const server = createMcpServer(c.get('cairn'), { version: options.version, logger });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      void server.close().catch(() => {});
    }
  });
  app.on(['GET', 'DELETE'], '/mcp', (c) =>
    c.json({ jsonrpc: '2.0', error: { code: -32000, message: 'this server is stateless: POST each request to /mcp' }, id: null }, 405),
  );

  /* ------------------------------------------------------------------ JSON API */

  app.get('/api/whoami', (c) => {
    const { hash: _hash, ...token } = c.get('token') as TokenRecord & { hash?: string };
    return c.json({ token, project: c.get('project') });
  });

  app.post('/api/remember', async (c) => {
    need(c, 'write');
    const input = parseWith(rememberInput, await jsonBody(c));
    const result = await c.get('cairn').remember({ ...input, source: 'manual' });
    return c.json({ id: result.memory.id, created: result.created, memory: result.memory, similar: result.similar, redacted: result.redacted }, result.created ? 201 : 200);
  });

  const recall = async (c: Context<ServeEnv>, input: z.infer<z.ZodObject<typeof recallInput>>) => {
    const result = await c.get('cairn').recall({ ...input, k: input.k ?? 8, checkFiles: false });
    return c.json({
      mode: result.mode,
      hits: result.hits.map((h) => ({ id: h.memory.id, text: h.memory.text, kind: h.memory.kind, scope: h.memory.scope, tags: h.memory.tags, project: h.memory.project, score: h.score, why: h.why })),
    });
  };
  app.post('/api/recall', async (c) => recall(c, parseWith(recallInput, await jsonBody(c))));
  app.get('/api/recall', async (c) => {
    const k = c.req.query('k');
    return recall(c, parseWith(recallInput, { query: c.req.query('query') ?? '', ...(k ? { k: Number(k) } : {}) }));
  });

  app.post('/api/forget', async (c) => {
    need(c, 'write');
    const input = parseWith(forgetInput, await jsonBody(c));
    return c.json(await c.get('cairn').forget(input.ids, input.reason));
  });

  app.get('/api/memories/:id', async (c) => c.json(await c.get('cairn').get(c.req.param('id'))));

  app.get('/api/status', async (c) => {
    const status = await c.get('cairn').status();
    return c.json({ ...status, token: { name: c.get('token').name, role: c.get('token').role } });
  });

  options.extend?.(app, (c) => c.get('cairn'));
  return app;
}
