import { describe, expect, it } from 'vitest';
import { workingSetLines, workingSetOf } from '../../src/context/working-set.js';
import type { TurnRecord } from '../../src/types.js';

let seq = 0;
function turn(role: TurnRecord['role'], toolName: string | null, text: string, toolInput: string | null = null, extra: Partial<TurnRecord> = {}): TurnRecord {
  seq++;
  return { id: `t${seq}`, sessionId: 's', seq, role, text, toolName, toolInput, toolUseId: null, isError: false, flags: [], at: null, sourceUuid: null, sourceLine: seq, ...extra };
}

describe('session working set', () => {
  it('keeps edited and read paths verbatim, successful commands, and call identifiers', () => {
    const turns = [
      turn('tool_call', 'Read', 'Read: /repo/src/a.ts', JSON.stringify({ file_path: '/repo/src/a.ts' })),
      turn('tool_result', 'Read', 'export function loadSession(id) { return store.loadSession(id); }'),
      turn('tool_call', 'Edit', 'Edit: /repo/src/b.ts', JSON.stringify({ file_path: '/repo/src/b.ts', old_string: 'x', new_string: 'sessionStore.updateSession(id, patch)' })),
      turn('tool_call', 'Bash', 'Bash: npm test -- --run', JSON.stringify({ command: 'npm test -- --run' }), { toolUseId: 'ok' }),
      turn('tool_result', 'Bash', 'passed', null, { toolUseId: 'ok' }),
      turn('tool_call', 'Bash', 'Bash: npm run missing', JSON.stringify({ command: 'npm run missing' }), { toolUseId: 'bad' }),
      turn('tool_result', 'Bash', 'npm ERR! missing script', null, { toolUseId: 'bad', isError: true }),
      turn('assistant', null, 'I will call verifyMessageOrder() next, not console.log().'),
    ];
    const set = workingSetOf(turns);
    expect(set.edited).toEqual(['/repo/src/b.ts']);
    expect(set.read).toEqual(['/repo/src/a.ts']);
    expect(set.commands).toEqual(['npm test -- --run']);
    expect(set.symbols).toEqual(expect.arrayContaining(['sessionStore.updateSession(', 'verifyMessageOrder(', 'store.loadSession(']));
    expect(set.symbols).not.toContain('console.log(');
    const lines = workingSetLines(set, 1000);
    expect(lines).toEqual(expect.arrayContaining(['- edited `/repo/src/b.ts`', '- ran `npm test -- --run`', '- read `/repo/src/a.ts`']));
    // a small budget still gets one line of each kind before more of any
    expect(workingSetLines(set, 16).map((l) => l.split(' ')[1])).toEqual(['edited', 'ran']);
  });
});
