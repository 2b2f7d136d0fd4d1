/**
 * The HTTP edge of the browser's JSON API: CairnError → status code (mapped once, here), and
 * request bodies and query strings validated with the shared zod schemas.
 */
import type { Context } from 'hono';
import { z, type ZodRawShape } from 'zod';
import { CairnError, invalid, type CairnErrorCode } from '../errors.js';

const STATUS: Partial<Record<CairnErrorCode, 400 | 401 | 403 | 404 | 409 | 413>> = {
  INVALID_INPUT: 400,
  TEXT_EMPTY: 400,
  TEXT_TOO_LONG: 400,
  EMBEDDER_MISMATCH: 400,
  SCHEMA_TOO_NEW: 400,
  MISSING_DEPENDENCY: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  TOO_LARGE: 413,
};

export interface ErrorBody {
  error: { code: string; message: string; field: string | null };
}

/** The status and JSON body for any thrown value: user errors keep their message, the rest say "internal". */
export function errorResponse(error: unknown): { status: 400 | 401 | 403 | 404 | 409 | 413 | 500; body: ErrorBody } {
  if (error instanceof CairnError) {
    const status = STATUS[error.code] ?? 500;
    return { status, body: { error: { code: error.code, message: error.message, field: error.field ?? null } } };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { status: 500, body: { error: { code: 'INTERNAL', message, field: null } } };
}

function fromZod(error: z.ZodError): CairnError {
  const issue = error.issues[0];
  const field = issue?.path.map(String).join('.') || undefined;
  return invalid(field ? `${field}: ${issue?.message ?? 'invalid'}` : (issue?.message ?? 'invalid input'), field);
}

/** Parse `value` with a schema shape (the MCP tools' shapes, or ones built from them). */
export function parseWith<S extends ZodRawShape>(shape: S, value: unknown): z.infer<z.ZodObject<S>> {
  const result = z.object(shape).strict().safeParse(value);
  if (!result.success) throw fromZod(result.error);
  return result.data;
}

/** The JSON body of a request (an empty body is `{}`), validated with `shape`. */
export async function body<S extends ZodRawShape>(c: Context, shape: S): Promise<z.infer<z.ZodObject<S>>> {
  const text = await c.req.text();
  let value: unknown = {};
  if (text.trim().length > 0) {
    try {
      value = JSON.parse(text);
    } catch {
      throw invalid('the request body is not valid JSON');
    }
  }
  return parseWith(shape, value);
}

/* Query strings carry text: these turn it into the types the shared schemas expect. */

/** `a,b,c` (or repeated keys) → array, absent → undefined. */
export function listParam(c: Context, name: string): string[] | undefined {
  const values = c.req.queries(name);
  if (!values || values.length === 0) return undefined;
  const out = values.flatMap((v) => v.split(',')).map((s) => s.trim()).filter(Boolean);
  return out.length > 0 ? out : undefined;
}

export function stringParam(c: Context, name: string): string | undefined {
  const value = c.req.query(name);
  return value === undefined || value === '' ? undefined : value;
}

/** A number, or the raw text when it is not one (so the schema names the field in its error). */
export function numberParam(c: Context, name: string): number | string | undefined {
  const value = stringParam(c, name);
  if (value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : value;
}

export function boolParam(c: Context, name: string): boolean | string | undefined {
  const value = stringParam(c, name);
  if (value === undefined) return undefined;
  if (value === '1' || value === 'true') return true;
  if (value === '0' || value === 'false') return false;
  return value;
}

/** Drop undefined entries so `.strict()` schemas and optional fields see only what was sent. */
export function defined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
