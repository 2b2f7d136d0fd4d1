import { describe, expect, it } from 'vitest';
import { indexTerms, indexText, queryTerms } from '../../src/store/tokenize.js';

describe('code-aware tokenizer', () => {
  it('keeps snake_case whole and split', () => {
    const terms = indexTerms('call process_workspace_changes first');
    expect(terms).toContain('process_workspace_changes');
    expect(terms).toContain('processworkspacechanges');
    expect(terms).toContain('workspace');
    expect(terms).toContain('changes');
  });

  it('splits camelCase and keeps it whole', () => {
    const terms = indexTerms('processWorkspaceChanges(path)');
    expect(terms).toContain('processworkspacechanges');
    expect(terms).toEqual(expect.arrayContaining(['process', 'workspace', 'changes', 'path']));
  });

  it('makes path:line findable whole and by parts', () => {
    const terms = indexTerms('see /src/workspace/resolver.rs:214 for the race');
    expect(terms).toContain('src_workspace_resolver_rs_214');
    expect(terms).toContain('resolver_rs_214');
    expect(terms).toContain('resolver_rs');
    expect(terms).toEqual(expect.arrayContaining(['resolver', 'rs', '214', 'workspace']));
    expect(queryTerms('resolver.rs:214')).toContain('resolver_rs_214');
  });

  it('handles acronyms and non-Latin scripts', () => {
    expect(indexTerms('HTTPServer')).toEqual(expect.arrayContaining(['httpserver', 'http', 'server']));
    expect(indexTerms('не используй моки')).toEqual(['не', 'используй', 'моки']);
  });

  it('dedups query terms and caps them', () => {
    expect(queryTerms('a a a b')).toEqual(['a', 'b']);
    expect(queryTerms(Array.from({ length: 100 }, (_, i) => `w${i}`).join(' '), 10)).toHaveLength(10);
  });
});

describe('code-aware tokenizer edge cases', () => {
  it('treats emoji, variation selectors and CJK punctuation as separators, and adds script terms after the words', () => {
    // Each emoji becomes a u<hex> term of its own (terms version 2); the variation selector does not.
    expect(indexTerms('🎯 core ✔️ done')).toEqual(['core', 'done', 'u1f3af', 'u2714']);
    const terms = indexTerms('重複したコンポーネント・型定義');
    expect(terms.slice(0, 2)).toEqual(['重複したコンポーネント', '型定義']);
    // CJK unigrams and bigrams within a run; the middle dot ends the run.
    expect(terms).toEqual(expect.arrayContaining(['重', '重複', '複', 'ント', 'ト', '型', '型定', '定義']));
    expect(terms).not.toContain('ト・');
    expect(terms).not.toContain('ト型');
  });

  it('keeps :: and -> member access as one compound', () => {
    expect(indexTerms('Vec::new')).toEqual(['vec_new', 'vec', 'new']);
    expect(indexTerms('self->lock')).toContain('self_lock');
  });

  it('does not take a time of day for a file:line', () => {
    // no `10` file-name term from the "line" rule: just the compound and its parts
    expect(indexTerms('at 10:30')).toEqual(['at', '10_30', '10', '30']);
    expect(indexTerms('see a.ts:12')).toEqual(['see', 'a_ts_12', 'a_ts', 'a', 'ts', '12']);
  });

  it('lower-cases characters that change length (İ)', () => {
    expect(indexTerms('İstanbulCity')).toContain('i̇stanbulcity');
  });
});

describe('index text written as one buffer', () => {
  it('is the index terms joined by spaces, whatever the characters', () => {
    const texts = [
      '',
      '   ...   ',
      'plain words only',
      'Vec::new and self->lock in src/a/b.rs:12 with process_workspace_changes',
      // a wide character after narrow terms, inside a compound and inside a camelCase word
      'first café then src/重複/файл.ts:7 then fooБар and HTTPServer',
      'İstanbulCity İ_x path/İ.ts:3',
      `${'word '.repeat(5000)}end_of_it`,
    ];
    for (const text of texts) expect(indexText(text)).toBe(indexTerms(text).join(' '));
    expect(indexTerms('first café then fooБар')).toEqual(['first', 'café', 'then', 'fooбар', 'foo', 'бар']);
    expect(indexTerms('src/重複/файл.ts:7')).toEqual(['src_重複_файл_ts_7', 'файл_ts_7', 'файл_ts', 'src', '重複', 'файл', 'ts', '7', '重', '重複', '複']);
  });

  it('leaves out terms longer than 64 characters, whole or part', () => {
    expect(indexTerms(`a_${'b'.repeat(70)}`)).toEqual(['a']);
    expect(indexTerms('x_y')).toEqual(['x_y', 'x', 'y', 'xy']);
  });
});
