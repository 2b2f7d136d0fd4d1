import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { CairnError, invalid } from '../errors.js';
import { editJsonc, isEmptyObject, parseJsoncObject, type JsonEdit } from './jsonc.js';
import { parseTomlFile, setTomlTable } from './toml.js';
import { SESSION_START_PARTS } from '../hooks/parts.js';

/** How to start cairn: the running node and this package's bin, so no global install is needed. */
export interface Launcher {
  node: string;
  bin: string;
  /** Extra environment for the commands (e.g. CAIRN_HOME when not the default). */
  env: Record<string, string>;
}

export type InstallScope = 'user' | 'project';
export type Agent = 'claude' | 'codex' | 'gemini' | 'cursor' | 'vscode';
export const INSTALL_AGENTS: readonly Agent[] = ['claude', 'codex', 'gemini', 'cursor', 'vscode'];

/** One file the installer changes: its path and a function from old content to new content. */
export interface FileChange {
  path: string;
  /** `null` old content means the file does not exist; `null` returned means the file should not exist. */
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

/**
 * One hook cairn registers: the client's event, the `cairn hook` event it runs, its timeout in the
 * client's unit (seconds for Claude Code and Codex, milliseconds for Gemini CLI) and, when the
 * client filters by it, a matcher.
 */
export interface HookSpec {
  event: string;
  cairn: string;
  timeout: number;
  matcher?: string;
  /**
   * Commands that each print one part of the event's text, for a client that caps each hook's
   * text (src/hooks/parts.ts): `<event> --parts N`, then `<event> --part K --parts N` for K = 2…N.
   */
  parts?: number;
  /** Codex: the tokens of `additionalContext` it passes whole (its default spills over 2,500 tokens to a file and a preview). */
  contextLimit?: number;
}

/** The Claude Code hook events cairn registers, and the `cairn hook` event each runs. */
export const CLAUDE_HOOKS: ReadonlyArray<HookSpec> = [
  // Claude Code shows the model at most 10,000 characters of each hook's text: the context in parts.
  { event: 'SessionStart', cairn: 'session-start', timeout: 30, parts: SESSION_START_PARTS },
  { event: 'UserPromptSubmit', cairn: 'prompt', timeout: 10 },
  { event: 'PreCompact', cairn: 'pre-compact', timeout: 60 },
  { event: 'Stop', cairn: 'stop', timeout: 10 },
  { event: 'SessionEnd', cairn: 'session-end', timeout: 10 },
  { event: 'SubagentStop', cairn: 'subagent-stop', timeout: 10 },
];

function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * The command of one hook: `node …/bin/cairn-hook.cjs <event>`, the CommonJS hook entry beside the
 * bin (it skips Node's ES module loader and uses V8's code cache; `cairn.js hook <event>` does the
 * same work a little slower, and commands written by older versions keep working).
 */
export function hookCommand(launcher: Launcher, event: string): string {
  const env = Object.entries(launcher.env).map(([k, v]) => `${k}=${shellQuote(v)} `).join('');
  const bin = launcher.bin.endsWith('cairn.js') ? `${launcher.bin.slice(0, -'cairn.js'.length)}cairn-hook.cjs` : launcher.bin;
  return `${env}${shellQuote(launcher.node)} ${HOOK_NODE_FLAGS.join(' ')} ${shellQuote(bin)}${bin === launcher.bin ? ' hook' : ''} ${event}`;
}

/**
 * Node flags of every hook process: a young generation of 16 MB a semi-space from the start (V8
 * starts it at 1 MB and grows it as the process allocates), so the post-compact start, which
 * allocates ~40 MB in ~100 ms, runs without the scavenges that growing takes; V8 reads the size
 * only at start, so it cannot be set from inside the hook. Not-prepared post-compact start @100K:
 * 426 → ~400 M instructions (callgrind), the hook's own time p50 114 → 108 ms over 35 alternated
 * runs at load ~10, max RSS +4 MB (docs/BENCHMARKS.md `## hooks` notes). The plugin's
 * hooks/hooks.json writes the same flags (test/install checks they agree).
 */
export const HOOK_NODE_FLAGS: readonly string[] = ['--min-semi-space-size=16'];

/** A cairn hook command, as this version writes it (`cairn-hook.cjs <event>`, maybe `--part K --parts N`) or older ones did (`cairn.js hook <event>`). */
export const CAIRN_HOOK_COMMAND = /(?:cairn(?:\.js)?['"]? hook|cairn-hook\.cjs['"]?) [a-z-]+(?: --parts? \d+)*/;

/** Codex's `additionalContextLimit` on cairn's SessionStart (tokens): above the largest context cairn builds (16,000 after /compact). */
export const CODEX_CONTEXT_LIMIT = 20_000;

/** The commands of one hook spec: one, or one per part (`--parts N`, then `--part K --parts N`). */
export function hookEvents(spec: HookSpec): string[] {
  if (!spec.parts || spec.parts <= 1) return [spec.cairn];
  const n = spec.parts;
  return Array.from({ length: n }, (_, i) => (i === 0 ? `${spec.cairn} --parts ${n}` : `${spec.cairn} --part ${i + 1} --parts ${n}`));
}

/** Our hook commands are recognised by their tail, whatever the paths. */
export function isCairnHookCommand(command: unknown): boolean {
  return typeof command === 'string' && new RegExp(`${CAIRN_HOOK_COMMAND.source}$`).test(command.trim());
}

/** The Codex hook events cairn registers (`~/.codex/hooks.json`, same shape as Claude Code's). */
export const CODEX_HOOKS: ReadonlyArray<HookSpec> = [
  // Codex passes `additionalContext` whole up to the handler's `additionalContextLimit` tokens
  // (default 2,500; over it, a file and a preview): cairn's contexts are bounded by their own budget.
  { event: 'SessionStart', cairn: 'session-start', timeout: 30, contextLimit: CODEX_CONTEXT_LIMIT },
  { event: 'UserPromptSubmit', cairn: 'prompt', timeout: 10 },
  { event: 'PreCompact', cairn: 'pre-compact', timeout: 60 },
  { event: 'Stop', cairn: 'stop', timeout: 10 },
];

/**
 * The Gemini CLI hook events cairn registers (`hooks` in its settings.json; timeouts in ms), as
 * read from @google/gemini-cli 0.61.0's bundle and checked against the real client
 * (test/e2e/gemini-compress.test.ts):
 * - SessionStart (source startup | resume | clear): its `additionalContext` goes before the prompt.
 * - BeforeAgent (once per user prompt, `prompt` in the input): its `additionalContext` is appended to the prompt.
 * - PreCompress fires before Gemini checks its compression threshold, i.e. before every model call
 *   with trigger `auto`; its output is not used. Only `/compress` (trigger `manual`, matched
 *   exactly) runs cairn's pre-compact (ingest, then the post-compact pool prepared in the background).
 * - BeforeModel fires before every model call with the request's text: once the history holds a
 *   compression's `<state_snapshot>`, cairn adds its post-compact context to that message (Gemini
 *   fires no SessionStart after compressing; see src/hooks/gemini.ts).
 * - AfterAgent (end of a prompt's turn) and SessionEnd ingest the chat, detached, as Stop does.
 */
export const GEMINI_HOOKS: ReadonlyArray<HookSpec> = [
  { event: 'SessionStart', cairn: 'session-start', timeout: 30_000 },
  { event: 'BeforeAgent', cairn: 'prompt', timeout: 10_000 },
  { event: 'PreCompress', cairn: 'pre-compact', timeout: 60_000, matcher: 'manual' },
  { event: 'BeforeModel', cairn: 'before-model', timeout: 30_000 },
  { event: 'AfterAgent', cairn: 'stop', timeout: 10_000 },
  { event: 'SessionEnd', cairn: 'session-end', timeout: 10_000 },
];

interface HookGroup {
  matcher?: string;
  hooks?: Array<{ type?: string; command?: string; timeout?: number; additionalContextLimit?: number }>;
}

/**
 * Merge (or remove) cairn's hooks in a hooks file of Claude Code's shape (`settings.json`, Codex's
 * `hooks.json`), keeping every other hook, the user's comments and formatting.
 */
export function mergeHooksFile(
  path: string,
  old: string | null,
  ctx: InstallContext,
  events: ReadonlyArray<HookSpec>,
): string | null {
  return finishJson(old, editJsonc(old, hookEdits(path, old, ctx, events)));
}

/** The edits that merge (or remove) cairn's hooks in a settings object of Claude Code's hook shape. */
function hookEdits(path: string, old: string | null, ctx: InstallContext, events: ReadonlyArray<HookSpec>): JsonEdit[] {
  const settings = parseJsoncObject(path, old);
  const hooks = (settings.hooks && typeof settings.hooks === 'object' && !Array.isArray(settings.hooks) ? settings.hooks : {}) as Record<string, unknown>;
  const edits: JsonEdit[] = [];
  const remaining = new Set(Object.keys(hooks));
  for (const spec of events) {
    const { event, timeout, matcher } = spec;
    const groups = Array.isArray(hooks[event]) ? (hooks[event] as HookGroup[]) : [];
    // Drop our previous entries (any path), keep everything else.
    const kept = groups
      .map((group) => ({ ...group, hooks: (group.hooks ?? []).filter((h) => !isCairnHookCommand(h.command)) }))
      .filter((group) => group.hooks.length > 0);
    if (!ctx.uninstall) {
      const limit = spec.contextLimit !== undefined ? { additionalContextLimit: spec.contextLimit } : {};
      kept.push({ ...(matcher ? { matcher } : {}), hooks: hookEvents(spec).map((command) => ({ type: 'command', command: hookCommand(ctx.launcher, command), timeout, ...limit })) });
    }
    const unchanged = kept.length === groups.length && groups.every((g, i) => isDeepStrictEqual(g, kept[i]));
    if (!unchanged) edits.push({ path: ['hooks', event], value: kept.length > 0 ? kept : undefined });
    if (kept.length === 0) remaining.delete(event);
  }
  if (remaining.size === 0 && settings.hooks !== undefined && ctx.uninstall) edits.push({ path: ['hooks'], value: undefined });
  return edits;
}

/** Merge (or remove) cairn's hooks in a Claude Code settings.json. */
export function mergeClaudeSettings(path: string, old: string | null, ctx: InstallContext): string | null {
  return mergeHooksFile(path, old, ctx, CLAUDE_HOOKS);
}

/** A file cairn emptied again goes (it held nothing of the user's); any other file stays. */
function finishJson(old: string | null, next: string | null): string | null {
  if (next === null) return old;
  if (isEmptyObject(next)) return null;
  return next;
}

/**
 * Node flags of the MCP server process every client starts: a young generation of at most 1 MB a
 * semi-space (V8's default grows it to 16 MB). The server idles between calls and that space stays
 * resident: idle RSS after `status` and one recall at 100K memories 79.4 → 71.9 MB (`cairn bench rss`,
 * which starts the server with these flags), for ~1.5–2 ms more per context call in that process
 * (`cairn bench context` under the flag, 3 interleaved rounds; docs/BENCHMARKS.md `## rss`).
 */
export const MCP_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1'];

/** Add (or remove) the cairn MCP server under `key` (`mcpServers` or VS Code's `servers`). */
export function mergeMcpJson(path: string, old: string | null, ctx: InstallContext, key: 'mcpServers' | 'servers', withType: boolean): string | null {
  return finishJson(old, editJsonc(old, mcpEdits(path, old, ctx, key, withType)));
}

/** The edit that adds (or removes) the cairn MCP server under `key` of a JSONC settings object. */
function mcpEdits(path: string, old: string | null, ctx: InstallContext, key: 'mcpServers' | 'servers', withType: boolean): JsonEdit[] {
  const config = parseJsoncObject(path, old);
  const servers = config[key];
  if (servers !== undefined && (servers === null || typeof servers !== 'object' || Array.isArray(servers))) {
    throw new CairnError('INVALID_INPUT', `${path}: "${key}" is not an object; fix it or move it aside, nothing was changed`);
  }
  const others = Object.keys((servers ?? {}) as Record<string, unknown>).filter((k) => k !== 'cairn');
  const value = ctx.uninstall
    ? undefined
    : {
        ...(withType ? { type: 'stdio' } : {}),
        command: ctx.launcher.node,
        args: [...MCP_NODE_FLAGS, ctx.launcher.bin, 'mcp'],
        ...(Object.keys(ctx.launcher.env).length > 0 ? { env: ctx.launcher.env } : {}),
      };
  return [value === undefined && others.length === 0 && servers !== undefined ? { path: [key], value: undefined } : { path: [key, 'cairn'], value }];
}

/**
 * Merge (or remove) cairn in a Gemini CLI settings.json, which holds both the MCP servers
 * (`mcpServers`) and the hooks ({@link GEMINI_HOOKS}), keeping everything else as it was.
 */
export function mergeGeminiSettings(path: string, old: string | null, ctx: InstallContext): string | null {
  const settings = parseJsoncObject(path, old);
  if (settings.hooks !== undefined && (settings.hooks === null || typeof settings.hooks !== 'object' || Array.isArray(settings.hooks))) {
    throw new CairnError('INVALID_INPUT', `${path}: "hooks" is not an object; fix it or move it aside, nothing was changed`);
  }
  return finishJson(old, editJsonc(old, [...hookEdits(path, old, ctx, GEMINI_HOOKS), ...mcpEdits(path, old, ctx, 'mcpServers', false)]));
}

/**
 * Set (or remove) `[mcp_servers.cairn]` in a Codex config.toml through a TOML library that keeps
 * comments, other tables and arrays of tables. Keys the user added to cairn's table (a timeout,
 * more `env`) are kept; `command`, `args` and cairn's own `env` entries are set.
 */
export function mergeCodexToml(path: string, old: string | null, ctx: InstallContext): string | null {
  const doc = parseTomlFile(path, old);
  const servers = doc.mcp_servers as Record<string, unknown> | undefined;
  const existing = (servers?.cairn && typeof servers.cairn === 'object' ? servers.cairn : {}) as Record<string, unknown>;
  let value: Record<string, unknown> | undefined;
  if (!ctx.uninstall) {
    const env = { ...((existing.env && typeof existing.env === 'object' ? existing.env : {}) as Record<string, unknown>), ...ctx.launcher.env };
    value = { ...existing, command: ctx.launcher.node, args: [...MCP_NODE_FLAGS, ctx.launcher.bin, 'mcp'] };
    if (Object.keys(env).length > 0) value.env = env;
    else delete value.env;
  }
  const next = setTomlTable(path, old, ['mcp_servers', 'cairn'], value);
  if (next !== null && next.trim().length === 0) return null;
  return next;
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
      if (ctx.scope === 'project') throw invalid('Codex reads MCP servers from ~/.codex/config.toml only: use --scope user', 'scope');
      const codexHome = ctx.env.CODEX_HOME ?? join(ctx.home, '.codex');
      const config = join(codexHome, 'config.toml');
      const hooks = join(codexHome, 'hooks.json');
      return [
        { path: config, apply: (old) => mergeCodexToml(config, old, ctx) },
        // Codex runs SessionStart / UserPromptSubmit / Stop hooks with Claude Code's input and output shape.
        { path: hooks, apply: (old) => mergeHooksFile(hooks, old, ctx, CODEX_HOOKS) },
      ];
    }
    case 'gemini': {
      // Gemini CLI reads ~/.gemini/settings.json (its home is GEMINI_CLI_HOME when set) and <project>/.gemini/settings.json.
      const path = ctx.scope === 'user' ? join(ctx.env.GEMINI_CLI_HOME ?? ctx.home, '.gemini', 'settings.json') : join(ctx.projectRoot, '.gemini', 'settings.json');
      return [{ path, apply: (old) => mergeGeminiSettings(path, old, ctx) }];
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
