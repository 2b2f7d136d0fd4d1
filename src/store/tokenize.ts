/**
 * The code-aware tokenizer shared by every full-text index (memories, turns) and by queries.
 *
 * Backends index the output of {@link indexTerms} with a plain word tokenizer (SQLite FTS5
 * `unicode61 tokenchars '_'`, PostgreSQL `simple`), so the same terms come out everywhere:
 * an identifier is kept whole (`process_workspace_changes`, `processworkspacechanges`,
 * `resolver_rs_214`) and also split on camelCase, snake_case, kebab-case, dots and path
 * separators, so `processWorkspaceChanges`, `workspace changes` and `resolver.rs:214` all match.
 */

/** A run of word characters possibly joined by code punctuation (`a.b`, `a/b`, `a::b`, `a-b`, `a:12`). */
const COMPOUND = /[\p{L}\p{N}_$]+(?:(?:[./\\:#@-]|::|->)[\p{L}\p{N}_$]+)*/gu;
const WORD = /[\p{L}\p{N}]+/gu;
const MAX_TERM = 64;

function splitCamel(word: string): string[] {
  // fooBarBaz → foo Bar Baz; HTTPServer → HTTP Server; utf8Decode → utf8 Decode
  return word
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .split(' ');
}

/** The terms a piece of text is indexed under, lower-cased, in order, with duplicates kept. */
export function indexTerms(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(COMPOUND)) {
    const compound = match[0];
    const parts = compound.match(WORD) ?? [];
    if (parts.length === 0) continue;
    const whole = parts.join('_').toLowerCase();
    if (parts.length > 1 && whole.length <= MAX_TERM) out.push(whole);
    // A path also answers to its file name, with and without the line: resolver_rs_214, resolver_rs.
    const slash = Math.max(compound.lastIndexOf('/'), compound.lastIndexOf('\\'));
    if (slash >= 0) {
      const base = compound.slice(slash + 1).match(WORD) ?? [];
      if (base.length > 1) out.push(base.join('_').toLowerCase());
    }
    const line = /^(.*\D):\d+$/.exec(compound);
    if (line?.[1]) {
      const file = line[1].slice(slash + 1).match(WORD) ?? [];
      if (file.length > 1) out.push(file.join('_').toLowerCase());
    }
    for (const part of parts) {
      const sub = splitCamel(part);
      const lower = part.toLowerCase();
      if (lower.length <= MAX_TERM) out.push(lower);
      if (sub.length > 1) for (const s of sub) if (s.length > 0) out.push(s.toLowerCase());
    }
    // snake_case inside a part is already split by WORD ('_' is not in WORD); keep the joined
    // form of underscores too, e.g. process_workspace_changes → also processworkspacechanges.
    if (compound.includes('_')) {
      const squashed = compound.replace(/[^\p{L}\p{N}]/gu, '').toLowerCase();
      if (squashed.length > 0 && squashed.length <= MAX_TERM && squashed !== whole) out.push(squashed);
    }
  }
  return out;
}

/** The string stored in a full-text column: the index terms joined by spaces. */
export function indexText(text: string): string {
  return indexTerms(text).join(' ');
}

/** Distinct query terms (same analysis as indexing), capped so a pasted log cannot explode a query. */
export function queryTerms(query: string, max = 32): string[] {
  const seen = new Set<string>();
  for (const term of indexTerms(query)) {
    if (seen.size >= max) break;
    seen.add(term);
  }
  return [...seen];
}
