import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseToml } from '@decimalturn/toml-patch';
import { CLAUDE_HOOKS, HOOK_NODE_FLAGS, hookEvents, isCairnHookCommand } from '../../src/install/targets.js';
import { runCli, tempDir } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function setup() {
  const userHome = tempDir('cairn-install-home-');
  const repo = tempDir('cairn-install-repo-');
  dirs.push(userHome, repo);
  mkdirSync(join(repo, '.git'));
  writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  const cairnHome = join(userHome, '.cairn');
  const cli = (args: string[]) => runCli(args, { home: cairnHome, cwd: repo, env: { HOME: userHome } });
  return { userHome, repo, cli };
}

type Settings = { hooks: Record<string, Array<{ matcher?: string; hooks: Array<{ command: string }> }>>; model?: string };

describe('cairn install', () => {
  it('merges hooks and the MCP server into Claude Code settings, idempotently, keeping the user’s hooks, with a backup', async () => {
    const { userHome, cli } = setup();
    const settingsPath = join(userHome, '.claude', 'settings.json');
    mkdirSync(join(userHome, '.claude'));
    const mine = { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo mine' }] };
    writeFileSync(settingsPath, JSON.stringify({ model: 'opus', hooks: { PreToolUse: [mine], SessionStart: [{ hooks: [{ type: 'command', command: 'echo hello' }] }] } }));

    const dry = await cli(['install', 'claude', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^\+ .*cairn-hook\.cjs session-start/m);
    expect(JSON.parse(readFileSync(settingsPath, 'utf8')).hooks.UserPromptSubmit).toBeUndefined();

    const first = await cli(['install', 'claude']);
    expect(first.code).toBe(0);
    const settings = JSON.parse(readFileSync(settingsPath, 'utf8')) as Settings;
    expect(settings.model).toBe('opus');
    expect(settings.hooks.PreToolUse).toEqual([mine]);
    // SessionStart in four parts (Claude Code shows each hook's text up to 10,000 characters: src/hooks/parts.ts).
    expect(settings.hooks.SessionStart?.flatMap((g) => g.hooks.map((h) => h.command))).toEqual([
      'echo hello',
      expect.stringMatching(/bin\/cairn-hook\.cjs session-start --parts 4$/),
      expect.stringMatching(/bin\/cairn-hook\.cjs session-start --part 2 --parts 4$/),
      expect.stringMatching(/bin\/cairn-hook\.cjs session-start --part 3 --parts 4$/),
      expect.stringMatching(/bin\/cairn-hook\.cjs session-start --part 4 --parts 4$/),
    ]);
    for (const spec of CLAUDE_HOOKS) {
      const commands = settings.hooks[spec.event]?.flatMap((g) => g.hooks.map((h) => h.command)) ?? [];
      expect(commands.filter(isCairnHookCommand), spec.event).toEqual(hookEvents(spec).map((c) => expect.stringMatching(new RegExp(`cairn-hook\\.cjs ${c}$`))));
    }
    const mcp = JSON.parse(readFileSync(join(userHome, '.claude.json'), 'utf8')) as { mcpServers: { cairn: { args: string[] } } };
    expect(mcp.mcpServers.cairn.args).toEqual(['--max-semi-space-size=1', resolve(import.meta.dirname, '../../bin/cairn.js'), 'mcp']);
    expect(readdirSync(join(userHome, '.claude')).some((f) => f.startsWith('settings.json.cairn-backup-'))).toBe(true);

    const installed = readFileSync(settingsPath, 'utf8');
    const again = await cli(['install', 'claude']);
    expect(again.stdout).toContain('already up to date');
    expect(readFileSync(settingsPath, 'utf8')).toBe(installed);

    await cli(['install', 'claude', '--uninstall']);
    const removed = JSON.parse(readFileSync(settingsPath, 'utf8')) as Settings;
    expect(removed.hooks).toEqual({ PreToolUse: [mine], SessionStart: [{ hooks: [{ type: 'command', command: 'echo hello' }] }] });
    // cairn created ~/.claude.json here (a real one holds Claude Code's state and stays); holding nothing else, it goes.
    expect(existsSync(join(userHome, '.claude.json'))).toBe(false);
  });

  it('project scope writes .claude/settings.json and .mcp.json in the repository', async () => {
    const { repo, cli } = setup();
    expect((await cli(['install', 'claude', '--scope', 'project'])).code).toBe(0);
    expect(existsSync(join(repo, '.claude', 'settings.json'))).toBe(true);
    expect(JSON.parse(readFileSync(join(repo, '.mcp.json'), 'utf8')).mcpServers.cairn.command).toBe(process.execPath);
  });

  it('writes Codex TOML, Cursor and VS Code JSON, keeping other entries', async () => {
    const { userHome, repo, cli } = setup();
    mkdirSync(join(userHome, '.codex'));
    writeFileSync(join(userHome, '.codex', 'config.toml'), 'model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n');
    await cli(['install', 'codex']);
    await cli(['install', 'codex']);
    const toml = parseToml(readFileSync(join(userHome, '.codex', 'config.toml'), 'utf8')) as { model: string; mcp_servers: Record<string, { command: string; args: string[] }> };
    expect(toml.model).toBe('o3');
    expect(Object.keys(toml.mcp_servers).sort()).toEqual(['cairn', 'other']);
    expect(toml.mcp_servers.cairn?.args).toEqual(['--max-semi-space-size=1', expect.stringMatching(/cairn\.js$/), 'mcp']);
    await cli(['install', 'codex', '--uninstall']);
    expect(readFileSync(join(userHome, '.codex', 'config.toml'), 'utf8')).toBe('model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n');

    await cli(['install', 'cursor', '--scope', 'project']);
    expect(JSON.parse(readFileSync(join(repo, '.cursor', 'mcp.json'), 'utf8')).mcpServers.cairn.args.at(-1)).toBe('mcp');
    mkdirSync(join(repo, '.vscode'));
    writeFileSync(join(repo, '.vscode', 'mcp.json'), JSON.stringify({ servers: { other: { command: 'y' } } }));
    await cli(['install', 'vscode']);
    const vscode = JSON.parse(readFileSync(join(repo, '.vscode', 'mcp.json'), 'utf8'));
    expect(Object.keys(vscode.servers)).toEqual(['other', 'cairn']);
    expect(vscode.servers.cairn.type).toBe('stdio');
  });

  it('refuses to touch a broken settings file and names it', async () => {
    const { userHome, cli } = setup();
    mkdirSync(join(userHome, '.claude'));
    writeFileSync(join(userHome, '.claude', 'settings.json'), '{ not json');
    const run = await cli(['install', 'claude']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/settings\.json:1:3: not valid JSON/);
    expect(readFileSync(join(userHome, '.claude', 'settings.json'), 'utf8')).toBe('{ not json');
    expect((await cli(['install', 'emacs'])).stderr).toMatch(/unknown agent/);
  });

  it('replaces the hook commands older versions wrote (`cairn.js hook <event>`) instead of adding a second set', async () => {
    expect(isCairnHookCommand('node "/opt/cairn/bin/cairn.js" hook prompt')).toBe(true);
    expect(isCairnHookCommand("CAIRN_HOME=/x '/usr/bin/node' /opt/cairn/bin/cairn-hook.cjs session-start")).toBe(true);
    expect(isCairnHookCommand('node other-hook.cjs prompt')).toBe(false);
    const { userHome, cli } = setup();
    const settingsPath = join(userHome, '.claude', 'settings.json');
    mkdirSync(join(userHome, '.claude'));
    writeFileSync(settingsPath, JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'node "/old/cairn/bin/cairn.js" hook prompt' }] }] } }));
    expect((await cli(['install', 'claude'])).code).toBe(0);
    const settings = JSON.parse(readFileSync(settingsPath, 'utf8')) as Settings;
    expect(settings.hooks.UserPromptSubmit?.flatMap((g) => g.hooks.map((h) => h.command))).toEqual([expect.stringMatching(/bin\/cairn-hook\.cjs prompt$/)]);
    // The hook process starts with the young generation it needs (HOOK_NODE_FLAGS).
    expect(settings.hooks.UserPromptSubmit?.[0]?.hooks[0]?.command).toContain(` ${HOOK_NODE_FLAGS.join(' ')} `);
  });

  it('ships a Claude Code plugin whose hooks and MCP server point at the bin', () => {
    const root = resolve(import.meta.dirname, '../..');
    const plugin = JSON.parse(readFileSync(join(root, '.claude-plugin', 'plugin.json'), 'utf8'));
    expect(plugin.name).toBe('cairn');
    const hooks = JSON.parse(readFileSync(join(root, 'hooks', 'hooks.json'), 'utf8')) as Settings;
    for (const spec of CLAUDE_HOOKS) {
      expect(hooks.hooks[spec.event]?.[0]?.hooks.map((h) => h.command)).toEqual(hookEvents(spec).map((c) => `node ${HOOK_NODE_FLAGS.join(' ')} "\${CLAUDE_PLUGIN_ROOT}/bin/cairn-hook.cjs" ${c}`));
    }
    expect(JSON.parse(readFileSync(join(root, '.mcp.json'), 'utf8')).mcpServers.cairn.args).toEqual(['--max-semi-space-size=1', '${CLAUDE_PLUGIN_ROOT}/bin/cairn.js', 'mcp']);
  });
});
