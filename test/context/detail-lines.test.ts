/**
 * Issue #15 item 2: one line per detail, in the section its kind belongs to, saying why it matters.
 * Flags and CSS custom properties are not files, a library's dotted name is not a file, and a
 * "path" holding an escape written out (`file1.txt\nfile2.txt`) is never rendered.
 */
import { describe, expect, it } from 'vitest';
import { activityOf, factDetails, garbledPath } from '../../src/context/details.js';
import { packDetails } from '../../src/context/session-context.js';
import type { FactSource, SessionFact, TurnRecord } from '../../src/types.js';

function source(seq: number, role: FactSource['role'], toolName: string | null): FactSource {
  return { turnId: `s:${seq}`, seq, role, toolName, at: null, note: null };
}
function fact(kind: SessionFact['kind'], text: string, at: FactSource, extra: Partial<SessionFact> = {}): SessionFact {
  return { id: `${kind}:${text}`, sessionId: 's', kind, text, path: kind === 'path' ? text : null, line: null, note: null, occurrences: 1, first: at, last: at, byUser: false, ...extra };
}
function turn(seq: number, role: TurnRecord['role'], text: string, extra: Partial<TurnRecord> = {}): TurnRecord {
  return { id: `s:${seq}`, sessionId: 's', seq, role, text, toolName: null, toolInput: null, toolUseId: null, isError: false, flags: [], at: null, sourceUuid: null, sourceLine: seq, ...extra };
}

/** The section each line was rendered in: `{ Files: [...], 'Other details': [...] }`. */
function sections(text: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  let current = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('## ')) out[(current = line.slice(3))] = [];
    else if (line.startsWith('- ')) out[current]?.push(line);
  }
  return out;
}

describe('garbledPath', () => {
  it('rejects control characters and escapes written out after a file name or among slashes; keeps Windows folders', () => {
    expect(garbledPath('file1.txt\\nfile2.txt')).toBe(true);
    expect(garbledPath('src/a.ts\\tb')).toBe(true);
    expect(garbledPath('src/a\u0007.ts')).toBe(true);
    expect(garbledPath('src/a.ts\nsrc/b.ts')).toBe(true);
    expect(garbledPath('C:\\new\\tools\\run.ps1')).toBe(false);
    expect(garbledPath('src/new_file.ts')).toBe(false);
  });
});

describe('post-compact detail sections', () => {
  const turns = [
    turn(1, 'user', 'style the panel'),
    turn(2, 'tool_call', 'Read', { toolName: 'Read', toolInput: JSON.stringify({ file_path: '/repo/assets/css/app.css' }) }),
    turn(3, 'tool_result', ':root { --accent-amber: #f5a623; }', { toolName: 'Read' }),
  ];
  const read = source(3, 'tool_result', 'Read');
  const facts = [
    fact('path', '/repo/assets/css/app.css', source(2, 'tool_call', 'Read')),
    fact('path', 'assets/js/app.js', read),
    fact('config', '--accent-amber', read, { occurrences: 6 }),
    fact('config', '--help', source(3, 'tool_result', 'Bash')),
    fact('path', 'xterm.js', read),
    fact('path', 'DateTime.diff', read),
    fact('path', 'AGENTS.md', read),
    fact('path', 'app.js', read),
    fact('path', 'file1.txt\\nfile2.txt', read),
  ];

  it('lists flags and dotted library names under other details, and files (existing, or named by a path of the session) under files', () => {
    const details = factDetails(facts, activityOf(turns), '/repo', (name) => name === 'AGENTS.md');
    const pack = packDetails(details, { budget: 4000, ranker: 'composite', seed: 1, endSeq: 3 });
    const by = sections(pack.text);
    const files = (by.Files ?? []).join('\n');
    const other = (by['Other details'] ?? []).join('\n');
    for (const name of ['/repo/assets/css/app.css', 'AGENTS.md', '`app.js`', 'assets/js/app.js']) expect(files).toContain(name);
    for (const name of ['--accent-amber', '--help', 'xterm.js', 'DateTime.diff']) {
      expect(files).not.toContain(name);
      expect(other).toContain(name);
    }
    expect(pack.text).not.toContain('file1.txt');
  });

  it('does not take a bare name for a file without the workspace saying so', () => {
    const details = factDetails(facts, activityOf(turns), '/repo');
    expect(details.find((d) => d.key === 'path:AGENTS.md')?.notFile).toBe(true);
    expect(details.find((d) => d.key === 'path:app.js')?.notFile).toBeUndefined();
  });
});
