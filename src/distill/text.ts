/**
 * Small text helpers the extractors and the gate share: one-line bounding, Markdown stripping,
 * sentence splitting, and the tests for "names something specific" and "states a rule".
 */
import { extractFileRefs } from '../workspace/files.js';

/** Collapse whitespace and cut at a word boundary with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const cut = flat.lastIndexOf(' ', max - 1);
  return `${flat.slice(0, cut > max * 0.6 ? cut : max - 1).replace(/[\s,;:.-]+$/, '')}…`;
}

/** A Markdown link to a file in the workspace (no URL scheme): `[resolver.rs](src/resolver.rs#L214)`. */
const LOCAL_LINK = /\[([^\]\n]+)\]\(<?(?![a-z][\w+.-]*:)([^)\s>]+)>?\)/gi;

/**
 * A file link as the `path:line` it points at, so the location survives (the link text alone is
 * usually just the file name): `[resolver.rs](src/resolver.rs#L214)` → `src/resolver.rs:214`;
 * `[the lock](src/ws.rs#L9-L12)` → `the lock (src/ws.rs:9-12)`.
 */
function fileLink(label: string, target: string): string {
  const m = /^(.*?)(?:#L(\d+)(?:C\d+)?(?:-L?(\d+)(?:C\d+)?)?)?$/.exec(target);
  const path = m?.[1] ?? target;
  if (path.length === 0) return label;
  const ref = m?.[2] ? `${path}:${m[2]}${m[3] ? `-${m[3]}` : ''}` : path;
  const plain = label.replace(/`/g, '').trim();
  const name = path.slice(path.lastIndexOf('/') + 1);
  const sameFile = plain === path || plain === ref || plain === name || path.endsWith(`/${plain}`) || ref.endsWith(`/${plain}`) || (plain.startsWith(`${name}:`) && m?.[2] !== undefined);
  return sameFile ? ref : `${label} (${ref})`;
}

/**
 * Markdown emphasis, headings, bullets and quote marks off; inline code kept; links to files
 * become their `path:line`, other links their text. Everything else stays exactly as written
 * (no case changes: `package.json` at a sentence start is still `package.json`).
 */
export function stripMarkdown(text: string): string {
  return text
    .replace(/\*\*|__/g, '')
    .replace(/^\s{0,3}(?:#{1,6}\s+|>\s?|[-*+•]\s+|\d+[.)]\s+)/gm, '')
    .replace(LOCAL_LINK, (_, label: string, target: string) => fileLink(label, target))
    .replace(/\[([^\]]+)\]\((?:https?:)?[^)]*\)/g, '$1')
    .trim();
}

/** Lines, then sentences within lines (a period followed by a space and a capital or backtick). */
export function sentences(text: string): string[] {
  const out: string[] = [];
  let inFence = false;
  for (const rawLine of text.split('\n')) {
    if (/^\s*```/.test(rawLine)) {
      inFence = !inFence;
      continue;
    }
    if (inFence) continue;
    const line = rawLine.trim();
    if (line.length === 0) continue;
    for (const part of line.split(/(?<=[.!?。！？])\s+(?=[A-ZА-ЯЁІЇЄҐÀ-Ý`"'(\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}])/u)) {
      const s = part.trim();
      if (s.length > 0) out.push(s);
    }
  }
  return out;
}

const CODE_SPAN = /`[^`\n]{2,}`/;
const CAMEL = /\b[a-z]+[A-Z][A-Za-z0-9]*\b|\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b/;
const SNAKE = /\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\b/;
const CALL = /\b[A-Za-z_][\w.]*\(/;
const DOTTED = /\b[a-z_]\w*\.[a-z_]\w*\b/i;
const NUMBER = /\b\d+(?:\.\d+)+\b|\b\d{2,}\b|:\d{2,5}\b/;
const FLAG = /(?:^|\s)--?[a-z][\w-]*/;
const CONSTANT = /\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b[A-Z]{3,}\b/;

/**
 * Whether a text names something exact: inline code, a path, an identifier (camelCase,
 * snake_case, a call, a dotted name, a CONSTANT), a number or version, or a command-line flag.
 */
export function hasSpecific(text: string): boolean {
  if (CODE_SPAN.test(text) || CAMEL.test(text) || SNAKE.test(text) || CALL.test(text) || NUMBER.test(text) || FLAG.test(text) || CONSTANT.test(text)) {
    return true;
  }
  if (DOTTED.test(text) && extractFileRefs(text).length > 0) return true;
  return extractFileRefs(text).length > 0;
}

/** Normative words in the languages the correction finder supports. */
const RULE_CUES = new RegExp(
  [
    String.raw`\b(?:always|never|must|mustn't|should|shouldn't|don't|do not|dont|avoid|prefers?|preferred|instead|make sure|only|no need|not|keep|use|without|likes?|wants?)\b`,
    String.raw`(?:^|[\s,.])(?:всегда|никогда|нельзя|не надо|не нужно|не |надо|нужно|должен|должна|лучше|вместо|завжди|ніколи|не треба|потрібно|замість)`,
    String.raw`\b(?:immer|nie|niemals|nicht|kein|keine|muss|sollte|statt|lieber|toujours|jamais|pas|doit|plutôt|au lieu|siempre|nunca|debe|en vez|en lugar|sempre|não|deve|em vez)\b`,
    String.raw`总是|永远|不要|别|必须|应该|而是|不是|常に|いつも|絶対|しないで|ないで|べき|じゃなくて|ではなく`,
  ].join('|'),
  'iu',
);

/** Whether a text states a rule (always / never / don't / must / instead …). */
export function isRuleLike(text: string): boolean {
  return RULE_CUES.test(text);
}

/** Words of a text (letters, digits, `_`), lower case. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
}

/** First sentence of a text, bounded. */
export function firstSentence(text: string, max = 200): string {
  const first = sentences(stripMarkdown(text))[0] ?? '';
  return oneLine(first, max);
}

/** Openers that carry nothing: acknowledgements, concessions, cheers. */
const EMPTY_OPENER =
  /^(?:you(?:'re| are) (?:absolutely |completely |totally )?(?:right|correct)|(?:absolutely|exactly) right|perfect|great|excellent|good|nice|awesome|brilliant|got it|understood|ok(?:ay)?|sure|alright|thanks?|thank you|my (?:mistake|bad)|good (?:point|catch)|i see|i understand)\b/i;
/** Openers that announce the next step rather than say what is. */
const INTENT_OPENER = /^(?:let me|now let me|let's|i'll|i will|now i'll|next,? i'll)\b/i;

/**
 * The first informative sentence of an agent reply (acknowledgements, headings and "let me …"
 * skipped), bounded; empty when there is none.
 */
export function gist(text: string, max = 160, options: { keepIntent?: boolean; preferProse?: boolean } = {}): string {
  const lines = text.split('\n').filter((line) => !/^\s*#{1,6}\s/.test(line) && !/^\s*\*\*[^*]+\*\*:?\s*$/.test(line));
  if (options.preferProse) {
    // Sentences of running text first; list items only when there is no prose.
    const prose = gist(lines.filter((line) => !/^\s*(?:[-*+•]|\d+[.)])\s/.test(line)).join('\n'), max, { ...options, preferProse: false });
    if (prose.length > 0) return prose;
  }
  const body = lines.join('\n');
  for (const sentence of sentences(stripMarkdown(body))) {
    const s = sentence.replace(/^[\p{Emoji_Presentation}\s:–—-]+/u, '').trim();
    if (EMPTY_OPENER.test(s) || (!options.keepIntent && INTENT_OPENER.test(s))) continue;
    if (words(s).length < 5 || /:$/.test(s)) continue;
    return oneLine(s, max);
  }
  return '';
}

/** Quote a short code-ish value in backticks unless it already is. */
export function code(value: string): string {
  const v = value.trim();
  return v.startsWith('`') && v.endsWith('`') ? v : `\`${v.replaceAll('`', "'")}\``;
}
