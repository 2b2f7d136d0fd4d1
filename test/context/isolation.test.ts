import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCairn, type Cairn } from '../../src/cairn.js';
import { admissible } from '../../src/recall/isolation.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/types.js';

describe('projects stay apart (#15.5)', () => {
  let store: Store;
  let root: string;
  const open = (project: string | null): Cairn =>
    createCairn({ store, clock: { now: () => Date.UTC(2026, 0, 1) }, project, workspaceRoot: root, session: 's-a', core: { project: null, user: null } });

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'cairn-iso-'));
    store = await openSqliteStore(':memory:');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('keeps other projects and project-unknown sessions out of context and recall; user-scope rules come in', async () => {
    const a = open('github.com/o/alpha');
    await a.remember({ text: 'alpha uses the flux capacitor in src/flux.ts', kind: 'fact' });
    await open('github.com/o/beta').remember({ text: 'beta uses the flux capacitor in lib/flux.rb', kind: 'fact' });
    const unknown = open(null);
    await unknown.remember({ text: 'an unknown session tuned the flux capacitor', kind: 'fact', scope: 'session' });
    await unknown.remember({ text: 'an unknown project decided the flux capacitor stays', kind: 'decision', scope: 'session' });
    await unknown.remember({ text: 'never run the flux capacitor tests in parallel', kind: 'preference', scope: 'user' });

    const context = await a.context({ budget: 4000 });
    expect(context.markdown).toContain('alpha uses the flux capacitor');
    expect(context.markdown).toContain('never run the flux capacitor tests in parallel');
    expect(context.markdown).not.toContain('beta uses');
    expect(context.markdown).not.toContain('unknown session');
    expect(context.markdown).not.toContain('unknown project decided');

    const { hits } = await a.recall({ query: 'flux capacitor', k: 10, touch: false });
    const texts = hits.map((h) => h.memory.text);
    expect(texts.some((t) => t.startsWith('alpha'))).toBe(true);
    expect(texts.some((t) => t.startsWith('never run'))).toBe(true);
    expect(texts.some((t) => t.startsWith('beta') || t.startsWith('an unknown'))).toBe(false);
    // Asked for every project, recall still finds them all.
    const all = await a.recall({ query: 'flux capacitor', k: 10, touch: false, allProjects: true });
    expect(all.hits.length).toBe(5);

    // A session whose project is unknown sees only project-less memories, never a project's.
    const fromUnknown = await unknown.context({ budget: 4000 });
    expect(fromUnknown.markdown).not.toContain('alpha uses');
    expect(fromUnknown.markdown).not.toContain('beta uses');
    await a.close();
  });

  it('admits by project, and from outside any project only user-scope rules', () => {
    expect(admissible({ project: 'p', scope: 'project', kind: 'fact' }, 'p')).toBe(true);
    expect(admissible({ project: 'q', scope: 'user', kind: 'preference' }, 'p')).toBe(false);
    expect(admissible({ project: null, scope: 'user', kind: 'correction' }, 'p')).toBe(true);
    expect(admissible({ project: null, scope: 'user', kind: 'fact' }, 'p')).toBe(false);
    expect(admissible({ project: null, scope: 'session', kind: 'correction' }, 'p')).toBe(false);
    expect(admissible({ project: null, scope: 'project', kind: 'fact' }, null)).toBe(true);
    expect(admissible({ project: 'p', scope: 'project', kind: 'fact' }, null)).toBe(false);
  });
});
