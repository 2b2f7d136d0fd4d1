/**
 * Read tools whose output is the file's bare text (Gemini CLI's read_file): definitions and calls
 * get their line counted from the first line shown — the header of a cut-short read, the range the
 * call asked for, or line 1. Claude Code's numbered Read output keeps its own numbers.
 */
import { describe, expect, it } from 'vitest';
import { extractTurnFacts, type PendingCall } from '../../src/ingest/facts/extract.js';

const FILE = ['// retry helpers', '', 'export function backoffDelay(attempt: number, baseMs = 250): number {', '  return Math.min(capDelay(attempt), baseMs * 2 ** attempt);', '}'];

/** The call a result answers, as the builder keeps it from the call's own facts. */
function readCall(toolName: string, args: Record<string, unknown>): PendingCall {
  const called = extractTurnFacts({ role: 'tool_call', text: JSON.stringify(args), toolName, toolArgs: args, flags: [], isError: false });
  return { turnId: 't1', seq: 1, at: null, toolName, command: called.command, path: called.path, firstLine: called.firstLine };
}

function lines(toolName: string, args: Record<string, unknown>, output: string): { symbol: number | null | undefined; call: number | null | undefined } {
  const facts = extractTurnFacts({ role: 'tool_result', text: output, toolName, flags: [], isError: false, call: readCall(toolName, args) }).facts;
  return {
    symbol: facts.find((f) => f.kind === 'symbol' && f.text === 'backoffDelay')?.line,
    call: facts.find((f) => f.kind === 'call' && f.text === 'capDelay')?.line,
  };
}

describe('line numbers of a read whose output is bare text', () => {
  it('a whole file (Gemini CLI read_file): counted from line 1', () => {
    expect(lines('read_file', { file_path: 'src/net/retry.ts' }, FILE.join('\n'))).toEqual({ symbol: 3, call: 4 });
  });

  it('a range asked for: from start_line (1-based), or a 0-based offset', () => {
    expect(lines('read_file', { file_path: 'src/net/retry.ts', start_line: 38, end_line: 42 }, FILE.join('\n'))).toEqual({ symbol: 40, call: 41 });
    expect(lines('read_file', { absolute_path: '/repo/src/net/retry.ts', offset: 37, limit: 5 }, FILE.join('\n'))).toEqual({ symbol: 40, call: 41 });
  });

  it('a read Gemini cut short: from its header’s "Showing lines A-B", the header not counted', () => {
    const output = [
      '',
      'IMPORTANT: The file content has been truncated.',
      'Status: Showing lines 101-105 of 912 total lines.',
      "Action: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call. For example, to read the next section of the file, use start_line: 106.",
      '',
      '--- FILE CONTENT (truncated) ---',
      ...FILE,
    ].join('\n');
    expect(lines('read_file', { file_path: 'src/net/retry.ts' }, output)).toEqual({ symbol: 103, call: 104 });
  });

  it('numbered output (Claude Code’s Read) keeps its own numbers, whatever the call asked for', () => {
    const numbered = FILE.map((text, i) => `${String(i + 38).padStart(6)}→${text}`).join('\n');
    expect(lines('Read', { file_path: 'src/net/retry.ts', offset: 38, limit: 5 }, numbered)).toEqual({ symbol: 40, call: 41 });
  });

  it('several files in one output (read_many_files) are found with no line (none is counted)', () => {
    expect(lines('read_many_files', { paths: ['src/net/retry.ts'] }, `--- src/net/retry.ts ---\n${FILE.join('\n')}`)).toEqual({ symbol: null, call: null });
  });
});
