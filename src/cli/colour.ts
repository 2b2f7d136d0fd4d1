/**
 * Colour for terminal output: only on a TTY, never with `NO_COLOR` set (no-color.org) or
 * `TERM=dumb`; `FORCE_COLOR` (non-zero) turns it on anyway.
 */
export interface Paint {
  red(text: string): string;
  yellow(text: string): string;
  green(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

const identity = (text: string): string => text;
const PLAIN: Paint = { red: identity, yellow: identity, green: identity, dim: identity, bold: identity };

/** Wrap in an SGR code, keeping a trailing newline outside the colour. */
const sgr = (open: number, close: number) => (text: string): string => {
  const newline = text.endsWith('\n') ? '\n' : '';
  const body = newline ? text.slice(0, -1) : text;
  return `\u001b[${open}m${body}\u001b[${close}m${newline}`;
};
const COLOURED: Paint = { red: sgr(31, 39), yellow: sgr(33, 39), green: sgr(32, 39), dim: sgr(2, 22), bold: sgr(1, 22) };

/** Whether to colour what goes to `stream`. */
export function useColour(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return true;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

/** Colour functions for `stream`: identity when colour is off. */
export function paint(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): Paint {
  return useColour(stream, env) ? COLOURED : PLAIN;
}
