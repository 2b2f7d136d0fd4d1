import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseJsonc } from 'jsonc-parser';
import { GEMINI_HOOKS, isCairnHookCommand } from '../../src/install/targets.js';
import { runCli, tempDir } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function setup(env: Record<string, string> = {}) {
  const userHome = tempDir('cairn-install-gemini-home-');
  const repo = tempDir('cairn-install-gemini-repo-');
  dirs.push(userHome, repo);
  mkdirSync(join(repo, '.git'));
  writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  const cli = (args: string[]) => runCli(args, { home: join(userHome, '.cairn'), cwd: repo, env: { HOME: userHome, ...env } });
  return { userHome, repo, cli };
}

type Group = { matcher?: string; hooks: Array<{ type: string; command: string; timeout: number }> };
type GeminiSettings = { hooks?: Record<string, Group[]>; mcpServers?: Record<string, { command: string; args: string[]; env?: Record<string, string> }>; model?: unknown; hooksConfig?: unknown };
const read = (path: string): GeminiSettings => parseJsonc(readFileSync(path, 'utf8')) as GeminiSettings;

/** The user's own settings.json: comments, an auth choice, an MCP server, a hook of theirs. */
const USER_SETTINGS = `{
  // my Gemini settings
  "security": { "auth": { "selectedType": "gemini-api-key" } },
  "mcpServers": { "github": { "command": "gh-mcp" } },
  "hooks": {
    "BeforeTool": [{ "matcher": "run_shell_command", "hooks": [{ "type": "command", "command": "echo mine" }] }]
  },
  "hooksConfig": { "enabled": true }
}
`;

describe('cairn install gemini', () => {
  it('adds the hooks and the MCP server to ~/.gemini/settings.json in place, idempotently, keeping comments and the user’s entries; --uninstall gives the file back', async () => {
    const { userHome, cli } = setup();
    const path = join(userHome, '.gemini', 'settings.json');
    mkdirSync(join(userHome, '.gemini'));
    writeFileSync(path, USER_SETTINGS);

    const first = await cli(['install', 'gemini']);
    expect(first.code, first.stderr).toBe(0);
    const text = readFileSync(path, 'utf8');
    expect(text).toContain('// my Gemini settings');
    const settings = read(path);
    expect(settings.mcpServers?.github).toEqual({ command: 'gh-mcp' });
    expect(settings.mcpServers?.cairn).toEqual({ command: process.execPath, args: ['--max-semi-space-size=1', resolve(import.meta.dirname, '../../bin/cairn.js'), 'mcp'] });
    expect(settings.hooks?.BeforeTool).toEqual([{ matcher: 'run_shell_command', hooks: [{ type: 'command', command: 'echo mine' }] }]);
    expect(settings.hooksConfig).toEqual({ enabled: true });
    for (const { event, cairn, timeout, matcher } of GEMINI_HOOKS) {
      const groups = settings.hooks?.[event] ?? [];
      expect(groups, event).toHaveLength(1);
      expect(groups[0]?.matcher, event).toBe(matcher);
      expect(groups[0]?.hooks, event).toEqual([{ type: 'command', command: expect.stringMatching(new RegExp(`cairn-hook\\.cjs ${cairn}$`)), timeout }]);
    }
    // Gemini's timeouts are milliseconds; PreCompress runs only for /compress (its `auto` fires before every model call).
    expect(settings.hooks?.PreCompress?.[0]?.matcher).toBe('manual');
    expect(settings.hooks?.SessionStart?.[0]?.hooks[0]?.timeout).toBe(30_000);

    const again = await cli(['install', 'gemini']);
    expect(again.stdout).toContain('already up to date');
    expect(readFileSync(path, 'utf8')).toBe(text);

    const removed = await cli(['install', 'gemini', '--uninstall']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe(USER_SETTINGS);
  });

  it('uninstall after the user edited the file removes only cairn’s entries', async () => {
    const { userHome, cli } = setup();
    const path = join(userHome, '.gemini', 'settings.json');
    expect((await cli(['install', 'gemini'])).code).toBe(0);
    writeFileSync(path, readFileSync(path, 'utf8').replace('{', '{\n  "theme": "GitHub",'));
    expect((await cli(['install', 'gemini', '--uninstall'])).code).toBe(0);
    const left = read(path);
    expect(left).toEqual({ theme: 'GitHub' });
    expect(Object.values(left.hooks ?? {}).flat().flatMap((g) => g.hooks.map((h) => h.command)).filter(isCairnHookCommand)).toEqual([]);
  });

  it('a file cairn created and emptied again goes', async () => {
    const { userHome, cli } = setup();
    const path = join(userHome, '.gemini', 'settings.json');
    await cli(['install', 'gemini']);
    expect(existsSync(path)).toBe(true);
    await cli(['install', 'gemini', '--uninstall']);
    expect(existsSync(path)).toBe(false);
  });

  it('--scope project writes <repo>/.gemini/settings.json; GEMINI_CLI_HOME moves the user file as it moves Gemini’s', async () => {
    const { repo, cli } = setup();
    expect((await cli(['install', 'gemini', '--scope', 'project'])).code).toBe(0);
    expect(read(join(repo, '.gemini', 'settings.json')).mcpServers?.cairn?.command).toBe(process.execPath);

    const geminiHome = tempDir('cairn-install-gemini-cli-home-');
    dirs.push(geminiHome);
    const moved = setup({ GEMINI_CLI_HOME: geminiHome });
    expect((await moved.cli(['install', 'gemini'])).code).toBe(0);
    expect(existsSync(join(geminiHome, '.gemini', 'settings.json'))).toBe(true);
    expect(existsSync(join(moved.userHome, '.gemini', 'settings.json'))).toBe(false);
  });

  it('refuses a broken settings.json or a "hooks" that is not an object with a one-line error, and leaves it as it was', async () => {
    const { userHome, cli } = setup();
    const path = join(userHome, '.gemini', 'settings.json');
    mkdirSync(join(userHome, '.gemini'));
    for (const broken of ['{ "mcpServers": { "x": ', '{ "hooks": [] }', '{ "mcpServers": 3 }']) {
      writeFileSync(path, broken);
      const result = await cli(['install', 'gemini']);
      expect(result.code, broken).not.toBe(0);
      expect(result.stderr.trim().split('\n'), broken).toHaveLength(1);
      expect(result.stderr, broken).toContain(path);
      expect(readFileSync(path, 'utf8'), broken).toBe(broken);
    }
  });

  it('--dry-run shows the change and writes nothing', async () => {
    const { userHome, cli } = setup();
    const dry = await cli(['install', 'gemini', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^\+ .*cairn-hook\.cjs before-model/m);
    expect(existsSync(join(userHome, '.gemini', 'settings.json'))).toBe(false);
  });
});
