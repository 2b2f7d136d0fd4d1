import { describe, expect, it } from 'vitest';
import { contentQuery } from '../../src/recall/stopwords.js';
import { createCairn } from '../../src/cairn.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';

describe('contentQuery', () => {
  it('drops English function words between spaces and sentence punctuation', () => {
    expect(contentQuery('What did Melanie paint?')).toBe('Melanie paint?');
    expect(contentQuery('how do I run the tests')).toBe('run tests');
    expect(contentQuery('Where is the (retry) loop, and why?')).toBe('(retry) loop, ?');
  });

  it('never cuts into code: dotted, slashed, snake_case and joined words stay whole', () => {
    expect(contentQuery('this.state is stale')).toBe('this.state stale');
    expect(contentQuery('what is_valid does in src/a/the.ts:12')).toBe('is_valid src/a/the.ts:12');
    expect(contentQuery("don't use it")).toBe("don't use");
  });

  it('searches a query of stopwords only as typed', () => {
    expect(contentQuery('what is it')).toBe('what is it');
    expect(contentQuery('   ')).toBe('   ');
  });
});

describe('recall over content words', () => {
  it('ranks the memory about the subject above ones that only share function words', async () => {
    const store = await openSqliteStore(':memory:');
    const cairn = createCairn({ store, embedder: null, project: 'p', actor: 'test' });
    try {
      const noise = [
        'What did the build do when it was run from the root? It was what it was.',
        'Where was the config when we did the move? It was in the old place.',
        'What is the thing that did it, and when did it do that?',
      ];
      for (const text of noise) await cairn.remember({ text });
      const target = await cairn.remember({ text: 'Melanie likes to paint sunsets over the lake' });
      const { hits } = await cairn.recall({ query: 'What did Melanie paint when it was done?', k: 3, touch: false, checkFiles: false });
      expect(hits[0]?.memory.id).toBe(target.memory.id);
      // Coverage is measured over content words: both of them are in the memory.
      expect(hits[0]?.why.coverage).toBe(1);
    } finally {
      await store.close();
    }
  });
});
