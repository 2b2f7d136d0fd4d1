/**
 * Which agents are wired to cairn, read from the files `cairn install <agent>` writes (read only,
 * never changed): Claude Code's, Codex's and Gemini CLI's hooks and MCP server, Cursor's and VS Code's MCP server.
 * Also whether each agent seems present on this machine, so the next step can be to wire it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from '@decimalturn/toml-patch';
import { CAIRN_HOOK_COMMAND } from '../install/targets.js';

export interface AgentWiring {
  /** The `cairn install` name. */
  agent: 'claude' | 'codex' | 'gemini' | 'cursor' | 'vscode';
  label: string;
  /** What of cairn the agent's files name: hooks and/or the MCP server. */
  hooks: boolean;
  mcp: boolean;
  /** The files that wire it. */
  files: string[];
  /** The agent's own folder exists (it is probably installed here). */
  present: boolean;
}

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** A cairn hook command (`… cairn-hook.cjs <event>`, or `… cairn.js hook <event>` from older versions). */
const HOOK = CAIRN_HOOK_COMMAND;
/** A `"cairn": {` server entry in an MCP JSON (or JSONC) file. */
const MCP_JSON = /"cairn"\s*:\s*\{/;
/** An `mcp_servers.cairn` table in Codex's TOML, however it is written (section, dotted key, inline). */
function codexMcp(path: string): boolean {
  const text = read(path);
  if (text === null || !text.includes('cairn')) return false;
  try {
    const servers = (parseToml(text) as { mcp_servers?: Record<string, unknown> }).mcp_servers;
    return servers?.cairn !== undefined;
  } catch {
    return false;
  }
}

function named(paths: string[], pattern: RegExp): string[] {
  return paths.filter((path) => pattern.test(read(path) ?? ''));
}

/** Wiring of each agent, for the user (`home`) and the project at `projectRoot`. */
export function agentWiring(env: NodeJS.ProcessEnv, home: string, projectRoot: string): AgentWiring[] {
  const claudeDir = env.CLAUDE_CONFIG_DIR ?? join(home, '.claude');
  const claudeHooks = named([join(claudeDir, 'settings.json'), join(projectRoot, '.claude', 'settings.json'), join(projectRoot, '.claude', 'settings.local.json')], HOOK);
  const claudeMcp = named([env.CLAUDE_CONFIG_DIR ? join(env.CLAUDE_CONFIG_DIR, '.claude.json') : join(home, '.claude.json'), join(projectRoot, '.mcp.json')], MCP_JSON);
  const codexDir = env.CODEX_HOME ?? join(home, '.codex');
  const codex = [join(codexDir, 'config.toml')].filter(codexMcp);
  const codexHooks = named([join(codexDir, 'hooks.json')], HOOK);
  const geminiDir = join(env.GEMINI_CLI_HOME ?? home, '.gemini');
  const geminiFiles = [join(geminiDir, 'settings.json'), join(projectRoot, '.gemini', 'settings.json')];
  const geminiHooks = named(geminiFiles, HOOK);
  const geminiMcp = named(geminiFiles, MCP_JSON);
  const cursor = named([join(home, '.cursor', 'mcp.json'), join(projectRoot, '.cursor', 'mcp.json')], MCP_JSON);
  const vscode = named([join(projectRoot, '.vscode', 'mcp.json')], MCP_JSON);
  return [
    { agent: 'claude', label: 'Claude Code', hooks: claudeHooks.length > 0, mcp: claudeMcp.length > 0, files: [...claudeHooks, ...claudeMcp], present: existsSync(claudeDir) },
    { agent: 'codex', label: 'Codex', hooks: codexHooks.length > 0, mcp: codex.length > 0, files: [...codexHooks, ...codex], present: existsSync(codexDir) },
    { agent: 'gemini', label: 'Gemini CLI', hooks: geminiHooks.length > 0, mcp: geminiMcp.length > 0, files: [...new Set([...geminiHooks, ...geminiMcp])], present: existsSync(geminiDir) },
    { agent: 'cursor', label: 'Cursor', hooks: false, mcp: cursor.length > 0, files: cursor, present: existsSync(join(home, '.cursor')) },
    { agent: 'vscode', label: 'VS Code', hooks: false, mcp: vscode.length > 0, files: vscode, present: existsSync(join(projectRoot, '.vscode')) },
  ];
}

export const isWired = (w: AgentWiring): boolean => w.hooks || w.mcp;
