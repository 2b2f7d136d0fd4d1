/**
 * Details captured before truncation (issue #15 item 1) that earlier rules let go: error and
 * exception names in code the agent wrote, `path:line` right after a GitHub workflow
 * annotation's `::`, and the calls and `--options` a user typed in their message — each with
 * what must not become a fact.
 */
import { describe, expect, it } from 'vitest';
import { extractTurnFacts, type TurnFacts } from '../../src/ingest/facts/extract.js';
import { scanPaths } from '../../src/ingest/facts/scan.js';
import { scanCalls, scanErrorNames } from '../../src/ingest/facts/scan-code.js';
import { FactSink, type ExtractedFact } from '../../src/ingest/facts/sink.js';

const edit = (name: string, args: unknown): TurnFacts => extractTurnFacts({ role: 'tool_call', text: '', toolName: name, toolArgs: args, flags: [], isError: false });
const userSays = (text: string): TurnFacts => extractTurnFacts({ role: 'user', text, toolName: null, flags: [], isError: false });
const shellOutput = (text: string): TurnFacts => extractTurnFacts({ role: 'tool_result', text, toolName: 'Bash', flags: [], isError: true, call: { turnId: 't', seq: 1, at: null, toolName: 'Bash', command: 'ruff check --output-format=github', path: null } });
const of = (result: TurnFacts, kind: ExtractedFact['kind']): string[] => result.facts.filter((f) => f.kind === kind).map((f) => f.text);

function scanned(scan: (text: string, sink: FactSink) => void, text: string): ExtractedFact[] {
  const sink = new FactSink();
  sink.presanitized();
  sink.source(text);
  scan(text, sink);
  return sink.facts;
}

describe('error and exception names in code the agent wrote', () => {
  const code = [
    'import json',
    '',
    'class EngineError(RuntimeError):',
    '    pass',
    '',
    'def load(path):',
    '    try:',
    '        return json.loads(open(path).read())',
    '    except (OSError, json.JSONDecodeError) as exc:',
    '        raise EngineError(str(exc)) from exc',
    '    except ValueError:',
    '        return None',
  ].join('\n');

  it('keeps each name a Write holds, with the file and the line it first occurs at', () => {
    const facts = edit('Write', { file_path: 'src/engine/load.py', content: code }).facts.filter((f) => f.kind === 'symbol');
    const byName = new Map(facts.map((f) => [f.text, f]));
    expect([...byName.keys()]).toEqual(expect.arrayContaining(['EngineError', 'RuntimeError', 'OSError', 'JSONDecodeError', 'ValueError']));
    // The definition keeps its signature; the names only used get the line they were first seen at.
    expect(byName.get('EngineError')?.note).toBe('class EngineError(RuntimeError):');
    expect(byName.get('OSError')).toMatchObject({ path: 'src/engine/load.py', line: 9, note: null });
    expect(byName.get('ValueError')).toMatchObject({ path: 'src/engine/load.py', line: 11 });
  });

  it('reads an Edit without a file (a diff with no file name) too, without a line', () => {
    const facts = edit('Edit', { old_string: 'except KeyError:', new_string: 'except (KeyError, IndexError):' }).facts;
    expect(facts.filter((f) => f.kind === 'symbol').map((f) => [f.text, f.line])).toEqual([['KeyError', null], ['IndexError', null]]);
  });

  it('takes no bare `Error` or `Exception`, no lower-case word and no name in the old string', () => {
    const names = scanned((t, s) => scanErrorNames(t, s), 'except Exception: raise Error("x") # an error, errors, myError, HTTPErrorCode, Errors').map((f) => f.text);
    expect(names).toEqual([]);
    const facts = edit('Edit', { file_path: 'a.py', old_string: 'raise LegacyError()', new_string: 'return None' }).facts;
    expect(facts.map((f) => f.text)).not.toContain('LegacyError');
  });

  it('is not applied to code a tool printed (a read keeps its calls, not every error name)', () => {
    const read = extractTurnFacts({ role: 'tool_result', text: '     1\texcept TimeoutError:\n     2\t    pass', toolName: 'Read', flags: [], isError: false, call: { turnId: 't', seq: 1, at: null, toolName: 'Read', command: null, path: 'a.py' } });
    expect(of(read, 'symbol')).not.toContain('TimeoutError');
  });
});

describe('path:line after a GitHub workflow annotation', () => {
  it('reads ruff`s github output format', () => {
    const out = '::error title=Ruff (FBT001),file=/home/dev/phi/src/phi/__init__.py,line=56,col=5,endLine=56,endColumn=12::src/phi/__init__.py:56:5: FBT001 Boolean-typed positional argument\n';
    expect(of(shellOutput(out), 'path')).toContain('src/phi/__init__.py:56');
  });

  it('still takes no path glued to one colon or to three', () => {
    expect(scanned(scanPaths, 'image:src/app.py node:fs/promises.js').map((f) => f.text)).toEqual([]);
    expect(scanned(scanPaths, 'x:::src/app.py').map((f) => f.text)).toEqual([]);
    expect(scanned(scanPaths, 'a::src/app.py:3').map((f) => f.text)).toEqual(['src/app.py:3']);
  });
});

describe('calls the user typed', () => {
  it('keeps dotted and code-like names in prose, and every call in backticks or a code block', () => {
    const text = [
      'Use `asyncio.run(` here instead of the loop, and pool.map(worker, items) for the batch.',
      'Also call `process_items()` once; parseConfig(x) is wrong.',
      '```python',
      'for i in range(10):',
      '    print(enumerate(xs))',
      '```',
    ].join('\n');
    const calls = of(userSays(text), 'call');
    expect(calls).toEqual(expect.arrayContaining(['asyncio.run', 'pool.map', 'process_items', 'parseConfig', 'range', 'enumerate']));
    expect(calls).not.toContain('print'); // a built-in the call scan never keeps
  });

  it('takes no plain word before a bracket in prose', () => {
    const calls = of(userSays('Check the file(s) and test(s). Note(see below) that fetch(everything) is slow; Done (mostly).'), 'call');
    expect(calls).toEqual([]);
  });

  it('keeps a plain word called with nothing, and one inside an unclosed code block', () => {
    expect(scanned((t, s) => scanCalls(t, s, { prose: true }), 'then run() again').map((f) => f.text)).toEqual([]); // under four characters
    expect(scanned((t, s) => scanCalls(t, s, { prose: true }), 'then reload() again').map((f) => f.text)).toEqual(['reload']);
    expect(scanned((t, s) => scanCalls(t, s, { prose: true }), 'like this:\n```\nvalues = items(data)').map((f) => f.text)).toEqual(['items']);
  });

  it('is not applied to the agent`s words', () => {
    const reply = extractTurnFacts({ role: 'assistant', text: 'I will use pool.map(worker) next.', toolName: null, flags: [], isError: false });
    expect(of(reply, 'call')).toEqual([]);
  });
});

describe('options the user typed', () => {
  it('keeps a `--flag` the user named, in prose or in backticks', () => {
    const config = of(userSays('Run ruff with --unsafe-fixes, and remember `bd sync --from-main` at the end.'), 'config');
    expect(config).toEqual(expect.arrayContaining(['--unsafe-fixes', '--from-main']));
  });

  it('takes no dash run, no dashes inside a word and no bare `--`', () => {
    expect(of(userSays('Well--then: a -- b\n---\nsee x---y and --- here, or -- alone, and --a'), 'config')).toEqual([]);
  });
});
