/**
 * Shell commands that print part of one file (how Codex reads code) count as reads: their
 * definitions are kept with path and line (issue #15 items 1 and 8; src/ingest/facts/shell-read.ts).
 */
import { describe, expect, it } from 'vitest';
import { extractTurnFacts, type PendingCall } from '../../src/ingest/facts/extract.js';
import { printedText, shellRead } from '../../src/ingest/facts/shell-read.js';

describe('shellRead: which commands print one file, and from which line', () => {
  it('recognises the common forms', () => {
    expect(shellRead('cat src/a.ts')).toEqual({ path: 'src/a.ts', numbered: false, firstLine: 1 });
    expect(shellRead('cat -n src/a.ts')).toEqual({ path: 'src/a.ts', numbered: true, firstLine: null });
    expect(shellRead("sed -n '40,80p' src/a.ts")).toEqual({ path: 'src/a.ts', numbered: false, firstLine: 40 });
    expect(shellRead('sed -n 12p ./lib/b.py')).toEqual({ path: './lib/b.py', numbered: false, firstLine: 12 });
    expect(shellRead('head -n 30 go/main.go')).toEqual({ path: 'go/main.go', numbered: false, firstLine: 1 });
    expect(shellRead('head -50 Cargo.toml')).toEqual({ path: 'Cargo.toml', numbered: false, firstLine: 1 });
    expect(shellRead("nl -ba src/a.ts | sed -n '100,160p'")).toEqual({ path: 'src/a.ts', numbered: true, firstLine: null });
    expect(shellRead("cat src/a.ts | sed -n '7,9p'")).toEqual({ path: 'src/a.ts', numbered: false, firstLine: 7 });
    expect(shellRead('cd /repo && cat /repo/src/a.ts')).toEqual({ path: '/repo/src/a.ts', numbered: false, firstLine: 1 });
  });

  it('leaves everything else alone', () => {
    for (const command of [
      'cat src/*.ts',
      'cat a.ts b.ts',
      'cat $FILE',
      'cat src/a.ts > out.txt',
      'cd sub && cat src/a.ts', // relative to a folder the command named
      "sed -i 's/a/b/' src/a.ts",
      "grep -n foo src/a.ts | sed -n '1,5p'",
      'tail -n 20 src/a.ts', // its first line is not known… and it is not recognised at all
      'cat README', // no extension: not read as code
      'npm test',
      null,
      undefined,
    ]) {
      expect(shellRead(command), String(command)).toBeNull();
    }
  });

  it('drops Codex’s exec_command header, and only that', () => {
    const body = '// line 38\nexport function f(a: number): number {\n';
    expect(printedText(`Chunk ID: f5c39c\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 36\nOutput:\n${body}`)).toBe(body);
    expect(printedText(`Wall time: 0.1 seconds\nOutput:\n${body}`)).toBe(body);
    expect(printedText(body)).toBe(body);
    expect(printedText(`Output:\n${body}`)).toBe(`Output:\n${body}`);
  });
});

const call = (command: string): PendingCall => ({ turnId: 't1', seq: 1, at: null, toolName: 'exec_command', command, path: null }) as PendingCall;

describe('a shell read yields the definitions a read tool’s output would', () => {
  it('sed -n: the signature with its path and line (Codex output with its header)', () => {
    const output = 'Chunk ID: ab12\nWall time: 0.0 seconds\nProcess exited with code 0\nOriginal token count: 30\nOutput:\n// line 38\n// line 39\nexport function backoffDelay(attempt: number, baseMs = 250): number {\n  return 1;\n}\n';
    const facts = extractTurnFacts({ role: 'tool_result', text: output, toolName: 'exec_command', flags: [], isError: false, call: call("sed -n '38,42p' src/net/retry.ts") }).facts;
    const symbol = facts.find((f) => f.kind === 'symbol' && f.text === 'backoffDelay' && f.note !== undefined && f.note !== null && f.note.includes('attempt: number'));
    expect(symbol?.path).toBe('src/net/retry.ts');
    expect(symbol?.line).toBe(40);
  });

  it('nl -ba piped into sed -n: the numbers the output carries', () => {
    const output = '   120\tdef resolve(path: Path, *, strict: bool = False) -> Node:\n   121\t    return walk(path)\n';
    const facts = extractTurnFacts({ role: 'tool_result', text: output, toolName: 'Bash', flags: [], isError: false, call: call("nl -ba pkg/resolve.py | sed -n '120,121p'") }).facts;
    const symbol = facts.find((f) => f.kind === 'symbol' && f.text === 'resolve' && f.path === 'pkg/resolve.py');
    expect(symbol?.line).toBe(120);
    expect(symbol?.note).toBe('def resolve(path: Path, *, strict: bool = False) -> Node:');
  });

  it('other shell output gets no definitions from this path', () => {
    const output = 'export function backoffDelay(attempt: number): number {\n';
    const facts = extractTurnFacts({ role: 'tool_result', text: output, toolName: 'exec_command', flags: [], isError: false, call: call('node scripts/print.js') }).facts;
    expect(facts.some((f) => f.kind === 'symbol' && f.note === 'export function backoffDelay(attempt: number): number {')).toBe(false);
  });
});
