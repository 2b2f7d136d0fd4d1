import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeRemoteUrl, parseGitConfig, resolveProject } from '../../src/workspace/project.js';

let base: string;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=cairn', '-c', 'user.email=cairn@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function newRepo(name: string): string {
  const dir = join(base, name);
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'commit', '-q', '--allow-empty', '-m', 'init');
  return dir;
}

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'cairn-project-')));
});

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

describe('resolveProject', () => {
  it('names a repository by its origin remote (scp form), from the root and from a subfolder', () => {
    const repo = newRepo('scp');
    git(repo, 'remote', 'add', 'origin', 'git@GitHub.com:Acme/Widgets.git');
    const sub = join(repo, 'src', 'deep', 'er');
    mkdirSync(sub, { recursive: true });

    const fromRoot = resolveProject(repo);
    expect(fromRoot).toEqual({
      id: 'github.com/Acme/Widgets',
      root: repo,
      kind: 'git-remote',
      remote: 'git@GitHub.com:Acme/Widgets.git',
      branch: 'main',
    });
    expect(resolveProject(sub)).toEqual(fromRoot);
  });

  it('gives the https form with credentials the same id as the ssh form', () => {
    const repo = newRepo('https');
    git(repo, 'remote', 'add', 'origin', 'https://bot:s3cret@github.com/Acme/Widgets.git/');
    expect(resolveProject(repo).id).toBe('github.com/Acme/Widgets');
  });

  it('uses the first remote when there is no origin', () => {
    const repo = newRepo('upstream');
    git(repo, 'remote', 'add', 'upstream', 'https://gitlab.example.org/team/tool');
    git(repo, 'remote', 'add', 'fork', 'git@github.com:me/tool.git');
    const project = resolveProject(repo);
    expect(project.kind).toBe('git-remote');
    expect(project.id).toBe('gitlab.example.org/team/tool');
  });

  it('treats linked worktrees as the same project, each with its own root and branch', () => {
    const repo = newRepo('wt-main');
    git(repo, 'remote', 'add', 'origin', 'ssh://git@github.com:22/acme/app.git');
    const worktree = join(base, 'wt-feature');
    git(repo, 'worktree', 'add', '-q', '-b', 'feature/login', worktree);
    mkdirSync(join(worktree, 'pkg'));

    const main = resolveProject(repo);
    const linked = resolveProject(join(worktree, 'pkg'));
    expect(linked.id).toBe(main.id);
    expect(linked.id).toBe('github.com/acme/app');
    expect(linked.root).toBe(worktree);
    expect(linked.branch).toBe('feature/login');
    expect(main.branch).toBe('main');
  });

  it('names a repository without remotes by its main root, the same from every worktree', () => {
    const repo = newRepo('local-only');
    const worktree = join(base, 'local-only-wt');
    git(repo, 'worktree', 'add', '-q', '-b', 'spike', worktree);

    expect(resolveProject(repo)).toEqual({ id: repo, root: repo, kind: 'git-local', remote: null, branch: 'main' });
    expect(resolveProject(worktree)).toEqual({ id: repo, root: worktree, kind: 'git-local', remote: null, branch: 'spike' });
  });

  it('reports a detached HEAD as no branch', () => {
    const repo = newRepo('detached');
    git(repo, 'checkout', '-q', '--detach');
    expect(resolveProject(repo).branch).toBeNull();
  });

  it('falls back to the folder outside git', () => {
    const dir = join(base, 'plain', 'folder');
    mkdirSync(dir, { recursive: true });
    // The temp dir may itself sit inside a repository on some machines; only check when it does not.
    const project = resolveProject(dir);
    if (project.kind === 'folder') {
      expect(project).toEqual({ id: dir, root: dir, kind: 'folder', remote: null, branch: null });
    }
  });

  it('follows a gitdir file without spawning git (submodule layout with core.worktree)', () => {
    const outer = join(base, 'super');
    const moduleGitDir = join(outer, '.git-modules', 'lib');
    const checkout = join(outer, 'lib');
    mkdirSync(moduleGitDir, { recursive: true });
    mkdirSync(checkout, { recursive: true });
    writeFileSync(join(checkout, '.git'), 'gitdir: ../.git-modules/lib\n');
    writeFileSync(join(moduleGitDir, 'HEAD'), 'ref: refs/heads/release\n');
    writeFileSync(join(moduleGitDir, 'config'), '[core]\n\tworktree = ../../lib\n');
    expect(resolveProject(checkout)).toEqual({ id: checkout, root: checkout, kind: 'git-local', remote: null, branch: 'release' });
  });

  it('treats a broken gitdir file as no repository', () => {
    const dir = join(base, 'broken');
    mkdirSync(dir);
    writeFileSync(join(dir, '.git'), 'gitdir: /nonexistent/worktrees/x\n');
    expect(resolveProject(dir)).toMatchObject({ id: dir, kind: 'folder' });
  });

  it('is fast enough for hooks', () => {
    const repo = newRepo('speed');
    const started = performance.now();
    for (let i = 0; i < 100; i++) resolveProject(repo);
    expect((performance.now() - started) / 100).toBeLessThan(5);
  });
});

describe('normalizeRemoteUrl', () => {
  it.each([
    ['git@github.com:owner/repo.git', 'github.com/owner/repo'],
    ['https://github.com/owner/repo', 'github.com/owner/repo'],
    ['https://github.com/owner/repo.git/', 'github.com/owner/repo'],
    ['HTTPS://User:Token@GitHub.COM/Owner/Repo.git', 'github.com/Owner/Repo'],
    ['ssh://git@gitlab.example.org:2222/group/sub/project.git', 'gitlab.example.org/group/sub/project'],
    ['git://example.org/pub/tool.git', 'example.org/pub/tool'],
    ['https://org@dev.azure.com/org/project/_git/repo', 'dev.azure.com/org/project/_git/repo'],
    ['git@bitbucket.org:/team/repo.git', 'bitbucket.org/team/repo'],
    ['file:///srv/git/project.git', '/srv/git/project'],
    ['/srv/git/project.git/', '/srv/git/project'],
  ])('%s → %s', (url, id) => {
    expect(normalizeRemoteUrl(url)).toBe(id);
  });
});

describe('parseGitConfig', () => {
  it('reads quoted subsections, comments, case-insensitive keys and insteadOf rules', () => {
    const config = parseGitConfig(
      [
        '# comment',
        '[core]',
        '\tbare = false',
        '[Remote "upstream"]',
        '\tURL = "https://example.org/a/b.git" ; trailing comment',
        '[url "git@github.com:"]',
        '\tinsteadOf = gh:',
      ].join('\n'),
    );
    expect(config.order).toEqual(['core', 'remote.upstream', 'url.git@github.com:']);
    expect(config.sections.get('remote.upstream')?.get('url')).toBe('https://example.org/a/b.git');
    expect(config.insteadOf).toEqual([['gh:', 'git@github.com:']]);
  });

  it('applies insteadOf before normalising', () => {
    const repo = newRepo('insteadof');
    git(repo, 'config', 'url.git@github.com:.insteadOf', 'gh:');
    git(repo, 'remote', 'add', 'origin', 'gh:acme/short');
    expect(resolveProject(repo)).toMatchObject({ id: 'github.com/acme/short', remote: 'gh:acme/short' });
  });
});
