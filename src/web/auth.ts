/**
 * Who may talk to the browser's server: whoever holds the token printed by `cairn ui`. The URL
 * carries it once; the server answers with an HttpOnly SameSite=Strict cookie and a redirect to
 * the bare URL, so the token leaves the address bar. Every later request must carry the cookie
 * (or the token itself); changes must also carry it in a header, which a page on another origin
 * cannot set without a CORS preflight this server never grants.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { CairnError } from '../errors.js';

/** The header a page sends its token in on POST / PUT / PATCH / DELETE. */
export const TOKEN_HEADER = 'X-Cairn-Token';
export const TOKEN_QUERY = 'token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Compare secrets in constant time (hashing first makes the lengths equal). */
export function sameSecret(given: string | undefined | null, expected: string): boolean {
  if (typeof given !== 'string' || given.length === 0) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export interface AuthOptions {
  token: string;
  cookieName: string;
  /** Hostnames accepted in the Host header (DNS-rebinding guard). */
  hosts: ReadonlySet<string>;
}


/** Token check for every request; the header check for every change. */
export function requireToken(options: AuthOptions): MiddlewareHandler {
  return async (c, next) => {
    // The node adapter builds the URL from the Host header; in-process requests carry it in the URL.
    if (!options.hosts.has(new URL(c.req.url).hostname)) {
      throw new CairnError('FORBIDDEN', 'this server only answers requests addressed to the loopback interface');
    }
    const fromQuery = c.req.query(TOKEN_QUERY);
    const fromCookie = getCookie(c, options.cookieName);
    const fromHeader = c.req.header(TOKEN_HEADER);
    const queryOk = sameSecret(fromQuery, options.token);
    if (!queryOk && !sameSecret(fromCookie, options.token) && !sameSecret(fromHeader, options.token)) {
      throw new CairnError('UNAUTHORIZED', 'missing or wrong token: open the URL that `cairn ui` printed');
    }
    if (!SAFE_METHODS.has(c.req.method) && !sameSecret(fromHeader, options.token)) {
      throw new CairnError('FORBIDDEN', `changes need the ${TOKEN_HEADER} header`);
    }
    if (queryOk) {
      setCookie(c, options.cookieName, options.token, { httpOnly: true, sameSite: 'Strict', path: '/' });
      if (c.req.method === 'GET' && !c.req.path.startsWith('/api/')) {
        // Drop the token from the address bar (and from history) once the cookie holds it.
        const url = new URL(c.req.url);
        url.searchParams.delete(TOKEN_QUERY);
        return c.redirect(`${url.pathname}${url.search}${url.hash}`, 303);
      }
    }
    await next();
  };
}
