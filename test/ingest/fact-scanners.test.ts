/**
 * The fact scanners' shortcuts find exactly what the plain scans they replace found: each is
 * checked against that plain scan (written out here) on random texts over the characters that
 * matter to it, and on a few hand-picked ones.
 */
import { describe, expect, it } from 'vitest';
import { scanGrepLines, scanPaths } from '../../src/ingest/facts/scan.js';
import { scanCalls } from '../../src/ingest/facts/scan-code.js';
import { FactSink, type ExtractedFact } from '../../src/ingest/facts/sink.js';
import { isFileLike } from '../../src/workspace/files.js';
import { mulberry32 } from '../helpers/prng.js';


/** Random texts made of `pieces` (characters and words that steer the scanner). */
function texts(seed: number, count: number, pieces: readonly string[], maxPieces: number): string[] {
  const next = mulberry32(seed);
  const out: string[] = [];
  for (let k = 0; k < count; k++) {
    let text = '';
    const n = 1 + Math.floor(next() * maxPieces);
    for (let i = 0; i < n; i++) text += pieces[Math.floor(next() * pieces.length)];
    out.push(text);
  }
  return out;
}

function factsOf(scan: (text: string, sink: FactSink) => void, text: string): ExtractedFact[] {
  const sink = new FactSink();
  sink.presanitized();
  sink.source(text);
  scan(text, sink);
  return sink.facts;
}

/* The plain scans, as they were before their shortcuts. */

const CALL = /(?<![\w$.])([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*){0,4})\(/g;

/** Call names in order of first occurrence, with the index of each first occurrence and the count. */
function plainCalls(code: string): Array<[string, number, number]> {
  const seen = new Map<string, { count: number; index: number }>();
  CALL.lastIndex = 0;
  for (let m = CALL.exec(code); m !== null; m = CALL.exec(code)) {
    const name = (m[1] as string).replace(/^(?:this|self)\./, '');
    if (name.length < 4) continue;
    const known = seen.get(name);
    if (known !== undefined) known.count++;
    else seen.set(name, { count: 1, index: m.index + m[0].length - 1 - name.length });
  }
  return [...seen.entries()].map(([name, s]) => [name, s.index, s.count]);
}

const PATH_CHAR = /[A-Za-z0-9_@+.~/\\-]/;
const SEPARATOR = /[/\\.]/g;

const LINE_SUFFIX = /(?::(\d{1,7})(?::\d+)?|#L(\d{1,7})(?:-L?\d+)?|\s?\((?:line|l\.)\s(\d{1,7})\)|["'`]?,\sline\s(\d{1,7})|\((\d{1,7})(?:,\d+)?\))/y;

/** scan.ts `scanPaths` before the shortcut (character tests as regexes, `isFileLike` unremembered). */
function plainScanPaths(text: string, sink: FactSink): void {
  if (sink.full('path')) return;
  SEPARATOR.lastIndex = 0;
  for (let m = SEPARATOR.exec(text); m !== null; m = SEPARATOR.exec(text)) {
    let start = m.index;
    while (start > 0 && PATH_CHAR.test(text.charAt(start - 1))) start--;
    let end = m.index + 1;
    while (end < text.length && PATH_CHAR.test(text.charAt(end))) end++;
    SEPARATOR.lastIndex = end;
    if (start >= 2 && text.charAt(start - 1) === ':' && /[A-Za-z]/.test(text.charAt(start - 2)) && (start < 3 || !PATH_CHAR.test(text.charAt(start - 3)))) {
      if (text.charAt(start) === '/' || text.charAt(start) === '\\') start -= 2;
    }
    const before = start > 0 ? text.charAt(start - 1) : ' ';
    const annotation = text.slice(Math.max(0, start - 3), start).endsWith('::') && !text.slice(Math.max(0, start - 3), start).endsWith(':::');
    if ((before === ':' && !annotation) || before === '@' || text.startsWith('//', start)) continue;
    let token = text.slice(start, end);
    while (token.length > 0 && (token.endsWith('.') || token.endsWith('/') || token.endsWith('\\'))) token = token.slice(0, -1);
    if (token.length < 3 || token.length > 400 || !isFileLike(token)) continue;
    const tokenEnd = start + token.length;
    LINE_SUFFIX.lastIndex = tokenEnd;
    const suffix = LINE_SUFFIX.exec(text);
    const line = suffix === null ? null : Number(suffix[1] ?? suffix[2] ?? suffix[3] ?? suffix[4] ?? suffix[5]);
    if (line !== null && line >= 1) sink.add('path', `${token}:${line}`, start, tokenEnd, { path: token, line });
    else sink.add('path', token, start, tokenEnd, { path: token });
    if (sink.full('path')) return;
  }
}

/** scan.ts `scanGrepLines` with `isFileLike` asked directly. */
function plainGrepLines(text: string, sink: FactSink): void {
  for (const m of text.matchAll(/^([^\s:]{1,400}):(\d{1,7})[:-]/gm)) {
    const path = m[1] as string;
    if (!isFileLike(path)) continue;
    const line = Number(m[2]);
    sink.add('path', `${path}:${line}`, m.index, m.index + path.length, { path, line });
    if (sink.full('path')) return;
  }
}

describe('call scan from each (', () => {
  const pieces = ['a', 'b', 'Z', '_', '$', '1', '.', '(', ')', ' ', '\n', 'this.', 'self.', 'foo', 'é', 'x(', '.y('];

  it('finds the calls the regex search found, with the same first index and count', () => {
    for (const text of texts(1, 4000, pieces, 40)) {
      const facts = factsOf((t, sink) => scanCalls(t, sink), text);
      // scanCalls keeps the most frequent (first seen first among equals) up to the cap, then sorts by index.
      const plain = plainCalls(text)
        .filter(([name]) => !['print', 'console.log', 'require', 'import', 'assert', 'defined', 'sizeof', 'unless', 'until', 'match', 'foreach', 'elseif', 'async', 'while', 'switch', 'catch', 'function', 'return', 'typeof', 'await', 'super', 'elif', 'else', 'with', 'when', 'case'].includes(name))
        .sort((x, y) => y[2] - x[2] || x[1] - y[1])
        .slice(0, 40)
        .sort((x, y) => x[1] - y[1])
        .map(([name]) => name);
      expect(facts.map((f) => f.text), JSON.stringify(text)).toEqual(plain);
    }
  });

  it('reads names joined by dots, at most five, none starting with a digit', () => {
    const names = (text: string): string[] => factsOf((t, sink) => scanCalls(t, sink), text).map((f) => f.text);
    expect(names('a.b.c.d.e(x) parseConfig( self.load() 1abc() a..bcde() .abcd() abcd.() a.b.c.d.e.f()')).toEqual(['a.b.c.d.e', 'parseConfig', 'load']);
    expect(names('x = obj.method_2(1); $jq$(y)')).toEqual(['obj.method_2', '$jq$']);
  });
});

describe('path scan skipping words that end at a separator', () => {
  const pieces = ['a', 'src', 'Makefile', 'LICENSE', 'README', 'Gemfile', '.', '/', '\\', '..', '.ts', '.md', ' ', '\n', 'C:', ':', '@', '//', 'x', '1', ':12', '-', 'done.', 'Done.', 'etc/', '~/', '.env'];

  it('keeps exactly the facts the plain scan kept', () => {
    for (const text of texts(2, 4000, pieces, 30)) {
      expect(factsOf((t, sink) => scanPaths(t, sink), text), JSON.stringify(text)).toEqual(factsOf(plainScanPaths, text));
    }
  });

  it('answers the same once its cache of verdicts is full, evicted and colliding', () => {
    // 120,000 distinct tokens (four times the cache's slots), half of them file-like, each met
    // three times in different texts: every verdict the cache gives must be isFileLike's.
    const next = mulberry32(7);
    const tokens = Array.from({ length: 120_000 }, (_, i) => {
      const word = `w${i.toString(36)}${next() < 0.5 ? '_x' : ''}`;
      return [`src/${word}.ts`, `${word}.then`, `this.${word}`, `${word}.md`, `a.${word}.b`, `/tmp/${word}`][i % 6] as string;
    });
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < tokens.length; i += 20) {
        const text = tokens.slice(i, i + 20).join(round === 1 ? ' and ' : '\n');
        expect(factsOf((t, sink) => scanPaths(t, sink), text)).toEqual(factsOf(plainScanPaths, text));
        const grep = tokens.slice(i, i + 20).map((token, k) => `${token}:${k + 1}: hit`).join('\n');
        expect(factsOf(scanGrepLines, grep)).toEqual(factsOf(plainGrepLines, grep));
      }
    }
  });

  it('keeps a bare file name at the end of a sentence', () => {
    const paths = (text: string): Array<string | null> => factsOf((t, sink) => scanPaths(t, sink), text).map((f) => f.path);
    expect(paths('See the Makefile. Then LICENSE, Dockerfile/ and CODEOWNERS. done. ok/ src/a.ts.')).toEqual(['Makefile', 'Dockerfile', 'CODEOWNERS', 'src/a.ts']);
  });
});

describe('path scan of text printed with its escapes', () => {
  const paths = (text: string): Array<string | null> => factsOf((t, sink) => scanPaths(t, sink), text).map((f) => f.path);

  it('reads a listing whose lines are joined by \\n as one path a line (regression: `file1.txt\\nfile2.txt` was one path)', () => {
    expect(paths('"stdout": "file1.txt\\nfile2.txt\\n"')).toEqual(['file1.txt', 'file2.txt']);
    expect(paths('Directory: /tmp\\nOutput: src/a.ts\\r\\nsrc/b.ts\\tREADME.md')).toEqual(['src/a.ts', 'src/b.ts', 'README.md']);
    expect(paths('tools\\nmix and /etc/hosts\\nls')).toEqual(['/etc/hosts']);
    expect(paths('x.ts\\nC:/repo/a.ts\\tD:\\repo\\b.py')).toEqual(['x.ts', 'C:/repo/a.ts', 'D:\\repo\\b.py']);
  });

  it('leaves Windows paths whole', () => {
    expect(paths('C:\\new\\file.txt and src\\utils\\a.ts and D:\\repo\\tests\\run.py')).toEqual(['C:\\new\\file.txt', 'src\\utils\\a.ts', 'D:\\repo\\tests\\run.py']);
    expect(paths('tests\\unit\\test_io.py')).toEqual(['tests\\unit\\test_io.py']);
  });

  it('finds in an escaped text the paths it finds in the text itself', () => {
    // A colon only after a space: `a:\n…` is a Windows drive and its folder `\n…` (as `C:\new`):
    // the text alone cannot tell.
    const pieces = ['a', 'src', 'Makefile', 'README', '.', '/', '..', '.ts', '.md', ' ', '\n', '\t', '\r', ' :', '@', 'x', 'n', 't', '1', ':12', '-', 'done.', 'etc/', '~/'];
    for (const text of texts(3, 4000, pieces, 30)) {
      const escaped = text.replace(/\n/g, '\\n').replace(/\t/g, '\\t').replace(/\r/g, '\\r');
      expect(paths(escaped), JSON.stringify(escaped)).toEqual(paths(text));
    }
  });

  it('reads every piece of a long escaped listing once', () => {
    const names = Array.from({ length: 5000 }, (_, i) => `dir${i}/f${i}.ts`);
    const found = paths(names.join('\\n'));
    expect(found.length).toBeGreaterThan(0);
    expect(found).toEqual(names.slice(0, found.length));
  });
});
