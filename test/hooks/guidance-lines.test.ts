/** PreCompact's must-keep list (src/hooks/events.ts guidanceLines): what the session did, not what it only saw. */
import { describe, expect, it } from 'vitest';
import { guidanceLines } from '../../src/hooks/events.js';
import { estimateTokens } from '../../src/tokens.js';

const MARKDOWN = [
  '# cairn memory — /repo',
  '<!-- Exact findings kept across /compact and sessions. -->',
  '',
  '## Corrections and rules',
  '- Use the sqlite fixture from tests/conftest.py, never mock the database [01JABCDEFGHJKMNPQRSTVWXYZ0]',
  '',
  '## Code',
  '- `def resolve(path: Path) -> Node:` at src/resolve.py:120',
  '- `Enum.join(` — in edits',
  '- `refill(` — called at bucket.ts:12',
  '',
  '## Seen only in output, files read and replies',
  '- `--surface-2`',
  '- `/tmp/foo.ex`',
  '',
  '## Commands',
  '- ran `pytest tests/test_watcher.py -x` — exit 1: AssertionError: expected 12 to be 10',
].join('\n');

describe('PreCompact guidance lines', () => {
  it('keeps rules, located code and commands under their headings; drops seen-only lines and calls without a location', () => {
    expect(guidanceLines(MARKDOWN, 600)).toEqual([
      '## Corrections and rules',
      '- Use the sqlite fixture from tests/conftest.py, never mock the database [01JABCDEFGHJKMNPQRSTVWXYZ0]',
      '## Code',
      '- `def resolve(path: Path) -> Node:` at src/resolve.py:120',
      '## Commands',
      '- ran `pytest tests/test_watcher.py -x` — exit 1: AssertionError: expected 12 to be 10',
    ]);
  });

  it('stays within its budget and never leaves a heading without a line', () => {
    const lines = guidanceLines(MARKDOWN, 30);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThan(6);
    expect(lines.reduce((n, l) => n + estimateTokens(l), 0)).toBeLessThanOrEqual(30);
    lines.forEach((line, i) => {
      if (line.startsWith('## ')) expect(lines[i + 1], `a line under ${line}`).toMatch(/^- /);
    });
    expect(guidanceLines(MARKDOWN, 1)).toEqual([]);
    expect(guidanceLines('## Seen only in output, files read and replies\n- `--x`', 600)).toEqual([]);
  });
});
