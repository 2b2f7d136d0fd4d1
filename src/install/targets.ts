import { join } from 'node:path';
import { CairnError, invalid } from '../errors.js';

/** How to start cairn: the running node and this package's bin, so no global install is needed. */
export interface Launcher {
  node: string;
  bin: string;
  /** Extra environment for the commands (e.g. CAIRN_HOME when not the default). */
  env: Record<string, string>;
}

export type InstallScope = 'user' | 'project';
export type Agent = 'claude' | 'codex' | 'cursor' | 'vscode';
export const INSTALL_AGENTS: readonly Agent[] = ['claude', 'codex', 'cursor', 'vscode'];

/** One file the installer changes: its path and a function from old content to new content. */
export interface FileChange {
  path: string;
  /** `null` old content means the file does not exist; return `null` to delete nothing/leave absent. */
  apply(old: string | null): string | null;
}

export interface InstallContext {
  launcher: Launcher;
  scope: InstallScope;
  uninstall: boolean;
  /** User home (for user-scope files). */
  home: string;
  /** Project root (for project-scope files). */
  projectRoot: string;
  env: NodeJS.ProcessEnv;
}

/** The Claude Code hook events cairn registers, and the `cairn hook` event each runs. */
export const CLAUDE_HOOKS: ReadonlyArray<{ event: string; cairn: string; timeout: number }> = [
  { event: 'SessionStart', cairn: 'session-start', timeout: 30 },
  { event: 'UserPromptSubmit', cairn: 'prompt', timeout: 10 },
  { event: 'PreCompact', cairn: 'pre-compact', timeout: 60 },
  { event: 'Stop', cairn: 'stop', timeout: 10 },
  { event: 'SessionEnd', cairn: 'session-end', timeout: 10 },
  { event: 'SubagentStop', cairn: 'subagent-stop', timeout: 10 },
];

function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

export function hookCommand(launcher: Launcher, event: string): string {
  const env = Object.entries(launcher.env).map(([k, v]) => `${k}=${shellQuote(v)} `).join('');
  return `${env}${shellQuote(launcher.node)} ${shellQuote(launcher.bin)} hook ${event}`;
}

/** Our hook commands are recognised by the `cairn.js hook <event>` tail, whatever the paths. */
export function isCairnHookCommand(command: unknown): boolean {
  return typeof command === 'string' && /cairn(\.js)?['"]? hook [a-z-]+$/.test(command.trim());
}

type Json = Record<string, unknown>;

function parseJsonFile(path: string, text: string | null): Json {
  if (text === null || text.trim().length === 0) return {};
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('not a JSON object');
    return value as Json;
  } catch (error) {
    throw new CairnError('INVALID_INPUT', `${path} is not valid JSON (${(error as Error).message}); fix it or move it aside, nothing was changed`, { cause: error });
  }
}

const asJson = (value: Json): string => `${JSON.stringify(value, null, 2)}\n`;

interface HookGroup {
  matcher?: string;
  hooks?: Array<{ type?: string; command?: string; timeout?: number }>;
}

/** Merge (or remove) cairn's hooks in a Claude Code settings.json, keeping every other hook. */
export function mergeClaudeSettings(path: string, old: string | null, ctx: InstallContext): string | null {
  const settings = parseJsonFile(path, old);
  const hooks = (settings.hooks && typeof settings.hooks === 'object' ? settings.hooks : {}) as Record<string, HookGroup[]>;
  for (const { event, cairn, timeout } of CLAUDE_HOOKS) {
    const groups = Array.isArray(hooks[event]) ? hooks[event] : [];
    // Drop our previous entries (any path), keep everything else.
    const kept = groups
      .map((group) => ({ ...group, hooks: (group.hooks ?? []).filter((h) => !isCairnHookCommand(h.command)) }))
      .filter((group) => (group.hooks ?? []).length > 0);
    if (!ctx.uninstall) kept.push({ hooks: [{ type: 'command', command: hookCommand(ctx.launcher, cairn), timeout }] });
    if (kept.length > 0) hooks[event] = kept;
    else delete hooks[event];
  }
  if (Object.keys(hooks).length > 0) settings.hooks = hooks;
  else delete settings.hooks;
  if (old === null && Object.keys(settings).length === 0) return null;
  return asJson(settings);
}

/** Add (or remove) the cairn MCP server under `key` (`mcpServers` or VS Code's `servers`). */
export function mergeMcpJson(path: string, old: string | null, ctx: InstallContext, key: 'mcpServers' | 'servers', withType: boolean): string | null {
  const config = parseJsonFile(path, old);
  const servers = (config[key] && typeof config[key] === 'object' ? config[key] : {}) as Json;
  if (ctx.uninstall) delete servers.cairn;
  else {
    servers.cairn = {
      ...(withType ? { type: 'stdio' } : {}),
      command: ctx.launcher.node,
      args: [ctx.launcher.bin, 'mcp'],
      ...(Object.keys(ctx.launcher.env).length > 0 ? { env: ctx.launcher.env } : {}),
    };
  }
  if (Object.keys(servers).length > 0) config[key] = servers;
  else delete config[key];
  if (old === null && Object.keys(config).length === 0) return null;
  return asJson(config);
}

const tomlString = (s: string): string => JSON.stringify(s);

/** Replace (or remove) the `[mcp_servers.cairn]` table of a Codex config.toml, keeping the rest verbatim. */
export function mergeCodexToml(old: string | null, ctx: InstallContext): string | null {
  const lines = (old ?? '').split('\n');
  const out: string[] = [];
  let skipping = false;
  for (const line of lines) {
    const header = /^\s*\[([^\]]+)\]\s*$/.exec(line);
    if (header) skipping = header[1]?.trim() === 'mcp_servers.cairn' || (header[1]?.trim().startsWith('mcp_servers.cairn.') ?? false);
    if (!skipping) out.push(line);
  }
  while (out.length > 0 && out[out.length - 1]?.trim() === '') out.pop();
  if (!ctx.uninstall) {
    const block = [
      '[mcp_servers.cairn]',
      `command = ${tomlString(ctx.launcher.node)}`,
      `args = [${[ctx.launcher.bin, 'mcp'].map(tomlString).join(', ')}]`,
    ];
    if (Object.keys(ctx.launcher.env).length > 0) {
      block.push(`env = { ${Object.entries(ctx.launcher.env).map(([k, v]) => `${k} = ${tomlString(v)}`).join(', ')} }`);
    }
    if (out.length > 0) out.push('');
    out.push(...block);
  }
  if (old === null && out.length === 0) return null;
  return `${out.join('\n')}\n`;
}

/** The files `cairn install <agent>` changes for a scope. */
export function changesFor(agent: Agent, ctx: InstallContext): FileChange[] {
  const claudeDir = ctx.env.CLAUDE_CONFIG_DIR ?? join(ctx.home, '.claude');
  switch (agent) {
    case 'claude': {
      const settings = ctx.scope === 'user' ? join(claudeDir, 'settings.json') : join(ctx.projectRoot, '.claude', 'settings.json');
      // Claude Code keeps user MCP servers in ~/.claude.json and project ones in <root>/.mcp.json.
      const mcp = ctx.scope === 'user' ? (ctx.env.CLAUDE_CONFIG_DIR ? join(ctx.env.CLAUDE_CONFIG_DIR, '.claude.json') : join(ctx.home, '.claude.json')) : join(ctx.projectRoot, '.mcp.json');
      return [
        { path: settings, apply: (old) => mergeClaudeSettings(settings, old, ctx) },
        { path: mcp, apply: (old) => mergeMcpJson(mcp, old, ctx, 'mcpServers', true) },
      ];
    }
    case 'codex': {
      const path = join(ctx.env.CODEX_HOME ?? join(ctx.home, '.codex'), 'config.toml');
      if (ctx.scope === 'project') throw invalid('Codex reads MCP servers from ~/.codex/config.toml only: use --scope user', 'scope');
      return [{ path, apply: (old) => mergeCodexToml(old, ctx) }];
    }
    case 'cursor': {
      const path = ctx.scope === 'user' ? join(ctx.home, '.cursor', 'mcp.json') : join(ctx.projectRoot, '.cursor', 'mcp.json');
      return [{ path, apply: (old) => mergeMcpJson(path, old, ctx, 'mcpServers', false) }];
    }
    case 'vscode': {
      if (ctx.scope === 'user') throw invalid('for VS Code cairn writes the workspace file .vscode/mcp.json: use --scope project', 'scope');
      const path = join(ctx.projectRoot, '.vscode', 'mcp.json');
      return [{ path, apply: (old) => mergeMcpJson(path, old, ctx, 'servers', true) }];
    }
  }
}
