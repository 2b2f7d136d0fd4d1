import { describe, expect, it } from 'vitest';
import { KEEP_MARKER, mergeDocs } from '../../bench/src/docs-merge.js';

const page = (figures: Record<string, string>, extra = ''): string =>
  [
    '# Benchmarks',
    '',
    'preamble of this run',
    '',
    '## Where cairn stands',
    '',
    '| suite | target | status |',
    '| --- | --- | --- |',
    ...Object.entries(figures).map(([suite, status]) => `| [${suite}](#${suite}) | t | ${status} |`),
    '',
    ...Object.entries(figures).flatMap(([suite, status]) => [`## ${suite}`, '', `figures: ${status}`, '']),
    extra,
    '## How these are measured',
    '',
    'method text',
    '',
  ].join('\n');

describe('bench --write-docs for some suites', () => {
  const existing = page({ recall: 'old recall', hooks: 'old hooks', fidelity: 'old fidelity' })
    .replace('figures: old fidelity\n', `figures: old fidelity\n\n${KEEP_MARKER}\n\n### Reading the fidelity figures\n\nhand-written notes\n`);

  it('replaces the sections and standing rows of the suites it ran, keeps the rest and the notes below the marker', () => {
    const fresh = page({ recall: 'not run', hooks: 'new hooks', fidelity: 'new fidelity' });
    const merged = mergeDocs(existing, fresh, new Set(['hooks', 'fidelity']));
    expect(merged).toContain('| [hooks](#hooks) | t | new hooks |');
    expect(merged).toContain('| [recall](#recall) | t | old recall |');
    expect(merged).toContain('figures: old recall');
    expect(merged).not.toContain('figures: old hooks');
    expect(merged).toContain('figures: new hooks');
    expect(merged).toMatch(/figures: new fidelity\n\n<!-- notes below[^\n]*\n\n### Reading the fidelity figures\n\nhand-written notes\n/);
    expect(merged).not.toContain('old fidelity');
    expect(merged.startsWith('# Benchmarks\n\npreamble of this run\n\n## Where cairn stands')).toBe(true);
    // merging the same run again changes nothing
    expect(mergeDocs(merged, fresh, new Set(['hooks', 'fidelity']))).toBe(merged);
  });

  it('adds a section the page did not have before the method section', () => {
    const fresh = page({ embed: 'new embed' });
    const merged = mergeDocs(existing, fresh, new Set(['embed']));
    expect(merged.indexOf('## embed')).toBeGreaterThan(merged.indexOf('## fidelity'));
    expect(merged.indexOf('## embed')).toBeLessThan(merged.indexOf('## How these are measured'));
    expect(merged).toContain('figures: old hooks');
  });
});
