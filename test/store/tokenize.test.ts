import { describe, expect, it } from 'vitest';
import { indexTerms, queryTerms } from '../../src/store/tokenize.js';

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
