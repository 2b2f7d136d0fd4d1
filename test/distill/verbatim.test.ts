/**
 * #19: distillation keeps every `path:line` and file name exactly as written — a Markdown link to
 * a file keeps its location (`[resolver.rs](src/resolver.rs#L214)` used to become `resolver.rs`),
 * and no case is changed at a sentence start (`package.json` used to become `Package.json`).
 */
import { describe, expect, it } from 'vitest';
import { extractCorrections } from '../../src/distill/extract/corrections.js';
import { extractInvariants } from '../../src/distill/extract/invariants.js';
import { extractLocations } from '../../src/distill/extract/locations.js';
import { extractStatements } from '../../src/distill/extract/statements.js';
import { gist, stripMarkdown } from '../../src/distill/text.js';
import { Turns } from './helpers.js';

describe('stripMarkdown keeps file links as path:line', () => {
  it.each([
    ['the race is in [resolver.rs](src/resolver.rs#L214)', 'the race is in src/resolver.rs:214'],
    ['see [resolver.rs:214](src/resolver.rs#L214)', 'see src/resolver.rs:214'],
    ['see [`src/resolver.rs`](src/resolver.rs#L214-L220)', 'see src/resolver.rs:214-220'],
    ['held by [the workspace lock](src/ws/lock.rs#L9)', 'held by the workspace lock (src/ws/lock.rs:9)'],
    ['config in [package.json](package.json)', 'config in package.json'],
    ['docs at [the guide](https://example.com/guide)', 'docs at the guide'],
    ['**Fixed** [app.ts](/home/dev/app/src/app.ts#L3C5)', 'Fixed /home/dev/app/src/app.ts:3'],
  ])('%s', (input, output) => {
    expect(stripMarkdown(input)).toBe(output);
  });

  it('changes no case', () => {
    expect(stripMarkdown('package.json pins zod to 4.1')).toBe('package.json pins zod to 4.1');
    expect(gist('package.json pins `zod` to 4.1 and nothing else changed.')).toBe('package.json pins `zod` to 4.1 and nothing else changed.');
  });
});

describe('extractors keep path:line and file names as written', () => {
  it('a finding written as a Markdown link keeps its path:line in the text and the files', () => {
    const t = new Turns().user('why does the build hang?').assistant('The deadlock is in [resolver.rs](src/resolver.rs#L214): `acquire_lock` runs after the read.');
    const [found] = extractLocations(t.view());
    expect(found?.text).toBe('The deadlock is in src/resolver.rs:214: `acquire_lock` runs after the read.');
    expect(found?.files).toEqual(['src/resolver.rs:214']);
  });

  it('an invariant or a rule starting with a file name keeps its case', () => {
    const inv = new Turns().user('check the lockfile').assistant('package.json must always pin `zod` to an exact version, because the schema cache keys on it.');
    expect(extractInvariants(inv.view())[0]?.text).toMatch(/^package\.json must always pin/);
    const rule = new Turns().user('bump zod').assistant('Bumped zod in package.json.').user("no, package.json must not change: don't touch package.json, pin it in pnpm-lock.yaml");
    expect(extractCorrections(rule.view())[0]?.text).toMatch(/^package\.json must not change/);
    const pref = new Turns().user('never edit package.json by hand; always use `pnpm add`.');
    expect(extractStatements(pref.view()).map((c) => c.text)).toEqual(['never edit package.json by hand; always use `pnpm add`.']);
  });
});
