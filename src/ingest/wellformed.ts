/**
 * Text fit to store: terminal escape sequences (colours, cursor moves, OSC titles and links) are
 * stripped, and lone UTF-16 surrogates — which JSON allows (`"\ud800"`) but UTF-8 cannot encode —
 * become U+FFFD, so nothing stored is invalid UTF-8. Both checks are a fast scan on text that
 * needs neither, and the same string comes back.
 */
import { stripVTControlCharacters } from 'node:util';

/** `String.prototype.isWellFormed` / `toWellFormed` (ES2024; Node 20 has them, the TS lib here is ES2023). */
interface WellFormed {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/** `text` with lone surrogates replaced by U+FFFD (the same string when there are none). */
export function wellFormed(text: string): string {
  const s = text as unknown as WellFormed;
  return s.isWellFormed() ? text : s.toWellFormed();
}

/** ESC (7-bit) and CSI (8-bit) introduce every escape sequence. */
function hasEscape(text: string): boolean {
  return text.includes('\u001b') || text.includes('\u009b');
}

/** An ESC or CSI that `stripVTControlCharacters` left: not the start of a sequence it knows (`ESC U`, a lone ESC at the end). */
const LEFT_OVER = /[\u001b\u009b]/g;

/**
 * `text` without ANSI escape sequences and with lone surrogates replaced (see the module doc). An
 * escape character that starts no sequence Node's stripper knows is dropped on its own, so no
 * stored text holds one (a damaged or unusual sequence would otherwise reach the store).
 */
export function storable(text: string): string {
  if (!hasEscape(text)) return wellFormed(text);
  const stripped = stripVTControlCharacters(text);
  return wellFormed(hasEscape(stripped) ? stripped.replace(LEFT_OVER, '') : stripped);
}

/** A record with every string property made {@link storable} (in place; records are fresh objects). */
export function storableFields<T extends object>(record: T): T {
  const fields = record as Record<string, unknown>;
  for (const key in fields) {
    const value = fields[key];
    if (typeof value === 'string') {
      const fixed = storable(value);
      if (fixed !== value) fields[key] = fixed;
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) if (typeof value[i] === 'string') value[i] = storable(value[i] as string);
    }
  }
  return record;
}
