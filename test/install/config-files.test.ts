import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from '@decimalturn/toml-patch';
import { parse as parseJsonc } from 'jsonc-parser';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';

// Users' config files are edited in place by TOML/JSONC libraries: comments, other tables and
// arrays of tables survive, re-running changes nothing, --uninstall gives the file back byte for
// byte, and a file that does not parse is named with its line and left untouched.

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function setup() {
  const userHome = tempDir('cairn-cfg-home-');
  const repo = tempDir('cairn-cfg-repo-');
  dirs.push(userHome, repo);
  mkdirSync(join(repo, '.git'));
  writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  const cli = (args: string[]) => runCli(args, { home: join(userHome, '.cairn'), cwd: repo, env: { HOME: userHome } });
  return { userHome, repo, cli };
}

// The shape issue #16 reported: a cairn table the user already had, an env sub-table under it and
// an array of tables after it (the old hand-written editor deleted both), plus comments.
const CODEX_CONFIG = `# my Codex settings
model = "o3" # the default

[mcp_servers.cairn]
command = "cairn-old"
startup_timeout_sec = 20

[mcp_servers.cairn.env]
FOO = "bar"

[[profiles.review]]
model = "o3-pro"

[[profiles.review]]
model = "gpt-5"

[mcp_servers.other]
# keep me
command = "other"
`;

describe('cairn install codex: TOML through a TOML library', () => {
  it('keeps comments, the env sub-table and arrays of tables; idempotent; uninstall restores the bytes', async () => {
    const { userHome, cli } = setup();
    const path = join(userHome, '.codex', 'config.toml');
    mkdirSync(join(userHome, '.codex'));
    writeFileSync(path, CODEX_CONFIG);

    expect((await cli(['install', 'codex'])).code).toBe(0);
    const text = readFileSync(path, 'utf8');
    expect(text).toContain('# my Codex settings');
    expect(text).toContain('model = "o3" # the default');
    expect(text).toContain('# keep me');
    const doc = parseToml(text) as {
      model: string;
      profiles: { review: Array<{ model: string }> };
      mcp_servers: { cairn: { command: string; args: string[]; startup_timeout_sec: number; env: Record<string, string> }; other: { command: string } };
    };
    expect(doc.profiles.review.map((p) => p.model)).toEqual(['o3-pro', 'gpt-5']);
    expect(doc.mcp_servers.other.command).toBe('other');
    expect(doc.mcp_servers.cairn.command).toBe(process.execPath);
    expect(doc.mcp_servers.cairn.args).toEqual(['--max-semi-space-size=1', expect.stringMatching(/bin\/cairn\.js$/), 'mcp']);
    expect(doc.mcp_servers.cairn.startup_timeout_sec).toBe(20);
    expect(doc.mcp_servers.cairn.env).toEqual({ FOO: 'bar' });
    expect(readdirSync(join(userHome, '.codex')).filter((f) => f.startsWith('config.toml.cairn-backup-'))).toHaveLength(1);

    const again = await cli(['install', 'codex']);
    expect(again.stdout).toMatch(/config\.toml: already up to date/);
    expect(readFileSync(path, 'utf8')).toBe(text);

    expect((await cli(['install', 'codex', '--uninstall'])).code).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe(CODEX_CONFIG);
  });

  it('adds a cairn table to a file without one and removes exactly it (CRLF, no trailing newline kept)', async () => {
    for (const original of ['model = "o3"\r\n\r\n[tui]\r\nnotifications = true\r\n', '# only a comment\nmodel = "o3"']) {
      const { userHome, cli } = setup();
      const path = join(userHome, '.codex', 'config.toml');
      mkdirSync(join(userHome, '.codex'));
      writeFileSync(path, original);
      await cli(['install', 'codex']);
      const installed = readFileSync(path, 'utf8');
      expect((parseToml(installed) as { mcp_servers: { cairn: { args: string[] } } }).mcp_servers.cairn.args.at(-1)).toBe('mcp');
      // The user edits the file after installing: uninstall removes cairn's table and keeps the edit.
      writeFileSync(path, installed.replace('model = "o3"', 'model = "gpt-5"'));
      await cli(['install', 'codex', '--uninstall']);
      expect(readFileSync(path, 'utf8')).toBe(original.replace('model = "o3"', 'model = "gpt-5"'));
    }
  });

  it('creates the Codex files when absent and removes them again on uninstall', async () => {
    const { userHome, cli } = setup();
    await cli(['install', 'codex']);
    const config = join(userHome, '.codex', 'config.toml');
    const hooks = join(userHome, '.codex', 'hooks.json');
    expect((parseToml(readFileSync(config, 'utf8')) as { mcp_servers: { cairn: { command: string } } }).mcp_servers.cairn.command).toBe(process.execPath);
    const events = JSON.parse(readFileSync(hooks, 'utf8')) as { hooks: Record<string, Array<{ hooks: Array<{ command: string; additionalContextLimit?: number }> }>> };
    expect(Object.keys(events.hooks)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreCompact', 'Stop']);
    expect(events.hooks.SessionStart?.[0]?.hooks[0]?.command).toMatch(/bin\/cairn-hook\.cjs session-start$/);
    // Codex spills a hook's context over 2,500 tokens to a file and a preview unless the handler allows more.
    expect(events.hooks.SessionStart?.[0]?.hooks[0]?.additionalContextLimit).toBe(20_000);
    expect(events.hooks.UserPromptSubmit?.[0]?.hooks[0]?.additionalContextLimit).toBeUndefined();
    await cli(['install', 'codex', '--uninstall']);
    expect(existsSync(config)).toBe(false);
    expect(existsSync(hooks)).toBe(false);
  });

  it('refuses invalid TOML with a one-line error naming file and line, file untouched', async () => {
    const { userHome, cli } = setup();
    const path = join(userHome, '.codex', 'config.toml');
    mkdirSync(join(userHome, '.codex'));
    const broken = 'model = "o3"\nsandbox_mode = \n[mcp_servers.other]\ncommand = "x"\n';
    writeFileSync(path, broken);
    const run = await cli(['install', 'codex']);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/config\.toml:[23]:\d+: not valid TOML \(Value must be on same line/);
    expect(readFileSync(path, 'utf8')).toBe(broken);
    expect(existsSync(join(userHome, '.codex', 'hooks.json'))).toBe(false);
  });
});

const VSCODE_MCP = `// Workspace MCP servers
{
  "servers": {
    /* a server of mine */
    "other": { "command": "y", }, // trailing comma, as VS Code allows
  },
  "inputs": [],
}
`;

describe('cairn install vscode/cursor/claude: JSON with comments through jsonc-parser', () => {
  it('edits a commented VS Code mcp.json in place; idempotent; uninstall restores the bytes', async () => {
    const { repo, cli } = setup();
    const path = join(repo, '.vscode', 'mcp.json');
    mkdirSync(join(repo, '.vscode'));
    writeFileSync(path, VSCODE_MCP);
    expect((await cli(['install', 'vscode'])).code).toBe(0);
    const text = readFileSync(path, 'utf8');
    expect(text).toContain('// Workspace MCP servers');
    expect(text).toContain('/* a server of mine */');
    expect(text).toContain('// trailing comma, as VS Code allows');
    const doc = parseJsonc(text, [], { allowTrailingComma: true }) as { servers: Record<string, { type?: string; command: string; args?: string[] }>; inputs: unknown[] };
    expect(Object.keys(doc.servers)).toEqual(['other', 'cairn']);
    expect(doc.servers.cairn).toMatchObject({ type: 'stdio', command: process.execPath, args: ['--max-semi-space-size=1', expect.stringMatching(/cairn\.js$/), 'mcp'] });
    expect(doc.inputs).toEqual([]);
    expect((await cli(['install', 'vscode'])).stdout).toMatch(/already up to date/);
    expect(readFileSync(path, 'utf8')).toBe(text);
    await cli(['install', 'vscode', '--uninstall']);
    expect(readFileSync(path, 'utf8')).toBe(VSCODE_MCP);
  });

  it('keeps comments in Claude Code settings.json and restores it on uninstall', async () => {
    const { userHome, cli } = setup();
    const path = join(userHome, '.claude', 'settings.json');
    mkdirSync(join(userHome, '.claude'));
    const original = '{\n  // my model\n  "model": "opus",\n  "hooks": {\n    "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "echo mine" }] }]\n  }\n}\n';
    writeFileSync(path, original);
    await cli(['install', 'claude']);
    const text = readFileSync(path, 'utf8');
    expect(text).toContain('// my model');
    const doc = parseJsonc(text) as { hooks: Record<string, unknown[]> };
    expect(Object.keys(doc.hooks)).toEqual(expect.arrayContaining(['PreToolUse', 'SessionStart', 'UserPromptSubmit', 'PreCompact']));
    await cli(['install', 'claude', '--uninstall']);
    expect(readFileSync(path, 'utf8')).toBe(original);
  });

  it('refuses invalid JSONC with a one-line error naming file and line, file untouched', async () => {
    const { repo, cli } = setup();
    const path = join(repo, '.cursor', 'mcp.json');
    mkdirSync(join(repo, '.cursor'));
    const broken = '{\n  "mcpServers": {\n    "x": { "command": "y" }\n  \n';
    writeFileSync(path, broken);
    const run = await cli(['install', 'cursor', '--scope', 'project']);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/\.cursor\/mcp\.json:5:1: not valid JSON/);
    expect(readFileSync(path, 'utf8')).toBe(broken);
  });
});
