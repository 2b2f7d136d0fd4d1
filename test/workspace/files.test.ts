import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { captureFileRefs, checkStaleness, extractFileRefs, FileReader, MAX_FILE_BYTES, resolveUnder } from '../../src/workspace/files.js';

describe('extractFileRefs', () => {
  it.each<[string, Array<{ path: string; line?: number }>]>([
    ['the race is in /src/workspace/resolver.rs:214', [{ path: '/src/workspace/resolver.rs', line: 214 }]],
    ['see src/a/b.ts:12:5 and ./x.py', [{ path: 'src/a/b.ts', line: 12 }, { path: './x.py' }]],
    ['../lib/util.go#L40-L52 and docs/guide.md (line 7)', [{ path: '../lib/util.go', line: 40 }, { path: 'docs/guide.md', line: 7 }]],
    ['fixed src/cli/run.ts, line 33.', [{ path: 'src/cli/run.ts', line: 33 }]],
    ['File "/app/server/main.py", line 88, in handler', [{ path: '/app/server/main.py', line: 88 }]],
    ['at Object.<anonymous> (/home/u/proj/src/x.js:10:15)', [{ path: '/home/u/proj/src/x.js', line: 10 }]],
    ['C:\\Users\\me\\proj\\src\\index.ts:9', [{ path: 'C:\\Users\\me\\proj\\src\\index.ts', line: 9 }]],
    ['`src/store/tokenize.ts`, [spec](docs/SPEC.md) and "tests/a.test.ts"', [{ path: 'src/store/tokenize.ts' }, { path: 'docs/SPEC.md' }, { path: 'tests/a.test.ts' }]],
    ['edit package.json, Makefile, .env and .github/workflows/ci.yml', [{ path: 'package.json' }, { path: 'Makefile' }, { path: '.env' }, { path: '.github/workflows/ci.yml' }]],
    ['the module lives in src/workspace now', [{ path: 'src/workspace' }]],
    ['README.md explains it.', [{ path: 'README.md' }]],
  ])('%s', (text, expected) => {
    expect(extractFileRefs(text)).toEqual(expected);
  });

  it('skips URLs, versions, domains, e-mail addresses and slash words', () => {
    const text = [
      'https://github.com/acme/app/blob/main/src/a.ts#L3 and http://localhost:3000/src/b.ts',
      'version 1.2.3, v2.0.1, 3.14 and 10.0.0.1',
      'hosted on example.com and api.github.com/repos/acme, mail jane@example.com',
      'Node.js, Vue.js, llama.cpp, process.env, e.g. and i.e. are not files; nor is </private>',
      'and/or, I/O, TCP/IP, 2024/01/02, 3/4, w/o',
      'GET /api/users returns @types/node',
    ].join('\n');
    expect(extractFileRefs(text)).toEqual([]);
  });

  it('dedupes and drops a bare mention of a path also given with a line', () => {
    expect(extractFileRefs('see src/a.ts:12, src/a.ts:12 and src/a.ts; also src/b.ts and src/b.ts')).toEqual([
      { path: 'src/a.ts', line: 12 },
      { path: 'src/b.ts' },
    ]);
  });
});

describe('captureFileRefs and checkStaleness', () => {
  let root: string;
  const lines = (n: number): string[] => Array.from({ length: n }, (_, i) => `const v${i + 1} = ${i + 1};`);
  const write = (rel: string, content: string): void => {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), content);
  };

  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'cairn-files-')));
    write('src/resolver.ts', `${lines(20).join('\n')}\n`);
  });

  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('captures hash and trimmed line text, path relative to the root', () => {
    write('src/indented.py', 'def f():\n    return compute(x)   \n');
    const [ref, indented] = captureFileRefs([{ path: 'src/resolver.ts', line: 5 }, { path: join(root, 'src/indented.py'), line: 2 }], root);
    const expectedHash = createHash('sha256').update(`${lines(20).join('\n')}\n`).digest('hex');
    expect(ref).toEqual({ path: 'src/resolver.ts', line: 5, hash: expectedHash, lineText: 'const v5 = 5;' });
    expect(indented).toMatchObject({ path: 'src/indented.py', line: 2, lineText: 'return compute(x)' });
  });

  it('resolves a root-relative path written as absolute', () => {
    const [ref] = captureFileRefs([{ path: '/src/resolver.ts', line: 3 }], root);
    expect(ref).toMatchObject({ path: 'src/resolver.ts', line: 3, lineText: 'const v3 = 3;' });
  });

  it('keeps only path and line for missing files, directories and files over the size limit', () => {
    write('big.log', 'x'.repeat(MAX_FILE_BYTES + 1));
    const refs = captureFileRefs([{ path: 'src/gone.ts', line: 4 }, { path: 'src' }, { path: 'big.log' }], root);
    expect(refs).toEqual([{ path: 'src/gone.ts', line: 4 }, { path: 'src' }, { path: 'big.log' }]);
  });

  it('dedupes references to the same file and line', () => {
    const refs = captureFileRefs([{ path: 'src/resolver.ts', line: 2 }, { path: './src/resolver.ts', line: 2 }, { path: 'src/resolver.ts' }], root);
    expect(refs.map((r) => [r.path, r.line])).toEqual([['src/resolver.ts', 2], ['src/resolver.ts', undefined]]);
  });

  it('ok when nothing changed', () => {
    const refs = captureFileRefs([{ path: 'src/resolver.ts', line: 10 }, { path: 'src/resolver.ts' }], root);
    expect(checkStaleness(refs, root).map((s) => s.status)).toEqual(['ok', 'ok']);
  });

  it('ok for a line reference when the file changed elsewhere; file-changed for a whole-file reference', () => {
    const refs = captureFileRefs([{ path: 'src/resolver.ts', line: 10 }, { path: 'src/resolver.ts' }], root);
    const edited = lines(20);
    edited[17] = 'const v18 = 1800;';
    write('src/resolver.ts', `${edited.join('\n')}\n`);
    expect(checkStaleness(refs, root)).toEqual([
      { path: 'src/resolver.ts', line: 10, status: 'ok' },
      { path: 'src/resolver.ts', status: 'file-changed' },
    ]);
  });

  it('a shared reader reads each file once across calls; a new reader sees the edit', () => {
    const refs = captureFileRefs([{ path: 'src/resolver.ts' }], root);
    const reader = new FileReader();
    expect(checkStaleness(refs, root, reader)[0]?.status).toBe('ok');
    write('src/resolver.ts', 'export const changed = true;\n');
    // The memories of one recall or context build share one reader: the file was read once, for all of them.
    expect(checkStaleness(refs, root, reader)[0]?.status).toBe('ok');
    expect(checkStaleness(refs, root, new FileReader())[0]?.status).toBe('file-changed');
    expect(checkStaleness(refs, root)[0]?.status).toBe('file-changed');
  });

  it('file-changed when the referenced line itself was edited', () => {
    const refs = captureFileRefs([{ path: 'src/resolver.ts', line: 10 }], root);
    const edited = lines(20);
    edited[9] = 'const v10 = computeLater();';
    write('src/resolver.ts', `${edited.join('\n')}\n`);
    expect(checkStaleness(refs, root)).toEqual([{ path: 'src/resolver.ts', line: 10, status: 'file-changed' }]);
  });

  it('line-moved with the new line when lines were inserted above', () => {
    const refs = captureFileRefs([{ path: 'src/resolver.ts', line: 10 }], root);
    write('src/resolver.ts', `// header\n// license\nimport x from "y";\n${lines(20).join('\n')}\n`);
    expect(checkStaleness(refs, root)).toEqual([{ path: 'src/resolver.ts', line: 10, status: 'line-moved', movedTo: 13 }]);
  });

  it('line-moved to the nearest copy when lines were deleted above', () => {
    const refs = captureFileRefs([{ path: 'src/resolver.ts', line: 10 }], root);
    write('src/resolver.ts', `${lines(20).slice(4).join('\n')}\n`);
    expect(checkStaleness(refs, root)[0]).toMatchObject({ status: 'line-moved', movedTo: 6 });
  });

  it('file-missing when the file was deleted', () => {
    const refs = captureFileRefs([{ path: 'src/resolver.ts', line: 10 }], root);
    unlinkSync(join(root, 'src/resolver.ts'));
    expect(checkStaleness(refs, root)).toEqual([{ path: 'src/resolver.ts', line: 10, status: 'file-missing' }]);
  });

  it('unknown without a stored hash, file-missing when such a file is absent', () => {
    expect(checkStaleness([{ path: 'src/resolver.ts', line: 1 }, { path: 'src/nope.ts' }], root)).toEqual([
      { path: 'src/resolver.ts', line: 1, status: 'unknown' },
      { path: 'src/nope.ts', status: 'file-missing' },
    ]);
  });

  it('works from extracted references end to end', () => {
    const refs = captureFileRefs(extractFileRefs('The off-by-one is at src/resolver.ts:7 (see also README.md).'), root);
    expect(refs).toEqual([expect.objectContaining({ path: 'src/resolver.ts', line: 7, lineText: 'const v7 = 7;' }), { path: 'README.md' }]);
    write('src/resolver.ts', `\n${lines(20).join('\n')}\n`);
    expect(checkStaleness(refs, root)).toEqual([
      { path: 'src/resolver.ts', line: 7, status: 'line-moved', movedTo: 8 },
      { path: 'README.md', status: 'file-missing' },
    ]);
  });
});

describe('resolveUnder', () => {
  const roots = ['/', '/repo', '/home/u/proj', '/home/u/proj/', '/home/u/./proj', '/home/u/x/../proj', '//srv/repo', 'relative/root'];
  const paths = ['a', 'src/a.ts', '.env', '.github/workflows/ci.yml', 'a..b/c', '...', 'a/...', 'a/.b', './a', 'a/./b', 'a/../b', '../up', '..', '.', 'a//b', 'a/', 'src/workspace/', 'dir with space/f.ts', 'C:\\x\\y.ts', 'ünïcode/ß.md'];
  it.each(roots.flatMap((root) => paths.map((path): [string, string] => [root, path])))('is resolve(%j, %j)', (root, path) => {
    expect(resolveUnder(root, path)).toBe(resolve(root, path));
  });
});
