/**
 * Typed errors with string codes. Surfaces map them once: CLI → one-line message and exit 1
 * (user errors) or 2 (internal), MCP → `isError` result, HTTP → status code.
 */
export type CairnErrorCode =
  | 'INVALID_INPUT'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'TEXT_EMPTY'
  | 'TEXT_TOO_LONG'
  | 'SCHEMA_TOO_NEW'
  | 'EMBEDDER_MISMATCH'
  | 'EMBEDDER_FAILED'
  | 'EMBEDDER_UNAVAILABLE'
  | 'STORE_FAILED'
  | 'STORE_CORRUPT'
  | 'STORE_UNAVAILABLE'
  | 'CONFIG_INVALID'
  | 'TOO_LARGE'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'MISSING_DEPENDENCY'
  | 'INTERNAL';

const USER_ERRORS: ReadonlySet<CairnErrorCode> = new Set([
  'INVALID_INPUT',
  'NOT_FOUND',
  'CONFLICT',
  'TEXT_EMPTY',
  'TEXT_TOO_LONG',
  'SCHEMA_TOO_NEW',
  'EMBEDDER_MISMATCH',
  // A local model's files are missing or damaged: the message names the file and the fix.
  'EMBEDDER_UNAVAILABLE',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'MISSING_DEPENDENCY',
  // Not bugs: the user repairs the file (`cairn doctor` says how) or sends less.
  'STORE_CORRUPT',
  'STORE_UNAVAILABLE',
  'CONFIG_INVALID',
  'TOO_LARGE',
]);

export class CairnError extends Error {
  readonly code: CairnErrorCode;
  /** The input field at fault, when there is one (MCP and HTTP name it). */
  readonly field: string | undefined;

  constructor(code: CairnErrorCode, message: string, options: { cause?: unknown; field?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CairnError';
    this.code = code;
    this.field = options.field;
  }

  /** True when the user can fix it (bad input, missing thing); false for bugs and I/O faults. */
  get isUserError(): boolean {
    return USER_ERRORS.has(this.code);
  }
}

export function isCairnError(error: unknown): error is CairnError {
  return error instanceof CairnError;
}

export function invalid(message: string, field?: string): CairnError {
  return new CairnError('INVALID_INPUT', message, field === undefined ? {} : { field });
}

export function notFound(what: string): CairnError {
  return new CairnError('NOT_FOUND', `${what} not found`);
}
