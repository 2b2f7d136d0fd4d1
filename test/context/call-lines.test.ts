/**
 * Calls share one line per file and reason after /compact (`- called in \`app.js\`: \`a(\`:3, \`b(\`:9`):
 * the line's head is paid once, so more of the calls a session made fit in the budget without
 * pushing out the files and commands ranked above them.
 */
import { describe, expect, it } from 'vitest';
import { callDetails, callGroup, type SessionActivity } from '../../src/context/details.js';
import { packDetails } from '../../src/context/session-context.js';
import { FEATURES, type Feature } from '../../src/context/value-model.js';
import type { Detail } from '../../src/context/details.js';

const ZERO = Object.fromEntries(FEATURES.map((f) => [f, 0])) as Record<Feature, number>;

function activity(calls: Array<[string, { inEdit: boolean; path?: string; where?: string; seen?: string }]>): SessionActivity {
  return {
    endSeq: 100,
    edited: new Map(),
    read: new Map(),
    calls: new Map(calls.map(([name, c], i) => [name, { weight: 10 - i * 0.01, lastSeq: 99, inEdit: c.inEdit, path: c.path ?? null, where: c.where ?? null, ...(c.seen ? { seen: c.seen } : {}) }])),
    task: '',
    errors: new Set(),
  };
}

/** A file detail the model values above any call (edited just before the compaction). */
function fileDetail(i: number): Detail {
  const features = { ...ZERO, 'kind:path': 1, recency: 1, edited: 1, editedRecently: 1, read: 1, absolute: 1 };
  return { key: `f${i}`, kind: 'path', line: `- \`/repo/src/module_${i}/file_${i}.py\` — edited just before the compaction`, features, lastSeq: 99, memory: null, factId: `f${i}` };
}

describe('call lines', () => {
  it('names the file and why once, then each call with the line it was seen at', () => {
    expect(callGroup('send_json', { inEdit: false, path: '/repo/src/server.py', where: 'server.py:41' }, '/repo')).toEqual({ key: 'file\0src/server.py', head: '- called in `src/server.py`: ', item: '`send_json(`:41' });
    expect(callGroup('send_json', { inEdit: true, path: '/repo/src/server.py', where: 'server.py:41' }, '/repo')).toEqual({ key: 'edit\0src/server.py', head: '- called in edits to `src/server.py`: ', item: '`send_json(`' });
    expect(callGroup('send_json', { inEdit: true }, '/repo').head).toBe('- called in edits: ');
    expect(callGroup('send_json', { inEdit: false, seen: 'in a reply' }, '/repo').head).toBe('- called in a reply: ');
    expect(callGroup('send_json', { inEdit: false }, '/repo').head).toBe('- calls seen in output: ');
  });

  it('puts the calls of one file on one line; the ledger still gets one entry per call', () => {
    const a = activity([
      ['send_json', { inEdit: false, path: '/repo/src/server.py', where: 'server.py:41' }],
      ['send_text', { inEdit: false, path: '/repo/src/server.py', where: 'server.py:55' }],
      ['guess_type', { inEdit: true, path: '/repo/src/static.py' }],
      ['read_bytes', { inEdit: true, path: '/repo/src/static.py' }],
    ]);
    const pack = packDetails(callDetails(a, new Set(), 1000, '/repo'), { budget: 4000, ranker: 'composite', seed: 1, endSeq: 100 });
    const lines = pack.text.split('\n').filter((l) => l.startsWith('- '));
    expect(lines).toHaveLength(2);
    expect(lines).toContain('- called in `src/server.py`: `send_json(`:41, `send_text(`:55');
    expect(lines).toContain('- called in edits to `src/static.py`: `guess_type(`, `read_bytes(`');
    expect(pack.chosen.map((c) => c.key).sort()).toEqual(['call:guess_type', 'call:read_bytes', 'call:send_json', 'call:send_text']);
  });

  it('fits more calls in a tight budget without leaving out a file ranked above them', () => {
    const calls = activity(Array.from({ length: 60 }, (_, i): [string, { inEdit: boolean; path: string }] => [`handler_number_${i}`, { inEdit: true, path: '/repo/src/server.py' }]));
    const details = [...Array.from({ length: 20 }, (_, i) => fileDetail(i)), ...callDetails(calls, new Set(), 1000, '/repo')];
    const options = { budget: 500, ranker: 'composite', seed: 1, endSeq: 100 };
    const grouped = packDetails(details, options);
    const single = packDetails(
      details.map(({ group: _group, ...d }) => d),
      options,
    );
    const keys = (p: typeof grouped): Set<string> => new Set(p.chosen.map((c) => c.key));
    const files = (p: typeof grouped): number => p.chosen.filter((c) => c.kind === 'path').length;
    const callCount = (p: typeof grouped): number => p.chosen.filter((c) => c.kind === 'call').length;
    expect(files(grouped)).toBe(files(single));
    for (const key of keys(single)) expect(keys(grouped).has(key), key).toBe(true);
    expect(callCount(single)).toBeLessThan(45);
    expect(callCount(grouped)).toBe(60);
    expect(grouped.tokens).toBeLessThanOrEqual(options.budget);
  });
});
