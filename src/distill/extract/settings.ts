/**
 * Configuration values and dependency versions the agent set: the key/value lines an edit of a
 * config file added or changed, and the dependency versions an edit of a manifest added or
 * changed. Keyed by file + key, so a later edit of the same key supersedes the older value.
 */
import { filePathOf, toolArgs, toolClass, writtenTextOf, type SessionView } from '../session.js';
import { code } from '../text.js';
import type { Candidate } from '../types.js';
import { candidate } from './common.js';

const MANIFESTS = /(?:^|\/)(?:package\.json|mix\.exs|Cargo\.toml|pyproject\.toml|requirements[\w.-]*\.txt|go\.mod|Gemfile|composer\.json|build\.gradle(?:\.kts)?|pom\.xml|deno\.json)$/;
const CONFIG_FILE =
  /(?:\.(?:ya?ml|toml|ini|cfg|conf|properties|env(?:\.\w+)?)$|(?:^|\/)\.env(?:\.\w+)?$|(?:^|\/)config\/[\w.-]+\.exs$|(?:^|\/)(?:tsconfig|jsconfig)[\w.-]*\.json$|(?:^|\/)\.?[\w-]*rc(?:\.json)?$|(?:^|\/)settings\.py$|\.config\.[cm]?[jt]s$|(?:^|\/)[\w.-]*config[\w.-]*\.json$)/i;
const LOCKFILE = /(?:lock|\.lock)(?:\.json|\.ya?ml)?$|-lock\.json$/i;

const VERSION_RULES: Array<[RegExp, RegExp]> = [
  [/package\.json$|composer\.json$|deno\.json$/, /^\s*"(@?[\w./-]+)"\s*:\s*"([~^<>=]*\s*v?\d[\w.+\- <>=|^~*]*)"/],
  [/mix\.exs$/, /\{\s*:(\w+)\s*,\s*"([~><=]*\s*\d[\w.+-]*)"/],
  [/Cargo\.toml$|pyproject\.toml$/, /^\s*([\w-]+)\s*=\s*(?:"([~^<>=]*\s*\d[\w.*+-]*)"|\{[^}]*version\s*=\s*"([^"]+)")/],
  [/requirements[\w.-]*\.txt$|pyproject\.toml$/, /^\s*"?([A-Za-z][\w.-]*)(?:\[[\w,]+\])?\s*((?:==|>=|~=|<=|>|<)\s*[\w.*+-]+)/],
  [/go\.mod$/, /^\s*(?:require\s+)?([\w.-]+\/[\w./-]+)\s+(v\d[\w.+-]*)/],
  [/Gemfile$/, /^\s*gem\s+['"]([\w-]+)['"]\s*,\s*['"]([^'"]+)['"]/],
];

/** `key: value`, `key = value`, `"key": value`, `KEY=value` with a short scalar value. */
const SETTING = /^\s*(?:"([A-Za-z_][\w.-]*)"\s*:\s*|'([A-Za-z_][\w.-]*)'\s*:\s*|([A-Za-z_][\w.-]*)(?::\s+|\s*=\s*))("[^"\n]{0,60}"|'[^'\n]{0,60}'|:?[\w.+\-/@]{1,60})\s*,?\s*(?:#.*)?$/;
/** Values that are code, not configuration (a variable in an Elixir or JS config). */
const SCALAR = /^(?:"[^"]*"|'[^']*'|:\w+|-?\d[\d._]*(?:ms|s|m|h|kb|mb|gb)?|true|false|nil|null|none)$/i;
const INLINE_SETTING = /(?:^|[\s,(])([a-z_][\w]*):\s+(:[\w]+|\d[\w.]*|true|false|nil|"[^"\n]{0,60}")(?=\s*[,)\]]|\s*$)/g;

const MAX_PER_EDIT = 5;

interface Pair {
  key: string;
  value: string;
}

function versionsIn(path: string, text: string): Pair[] {
  const out: Pair[] = [];
  for (const [file, rule] of VERSION_RULES) {
    if (!file.test(path)) continue;
    for (const line of text.split('\n')) {
      const m = rule.exec(line);
      const value = m?.[2] ?? m?.[3];
      if (m?.[1] && value && !/^(?:version|name|description|python|edition|requires-python)$/.test(m[1])) out.push({ key: m[1], value: value.trim() });
    }
  }
  return out;
}

function settingsIn(text: string, scalarOnly: boolean): Pair[] {
  const out: Pair[] = [];
  for (const line of text.split('\n')) {
    if (line.trim().length === 0 || /^\s*(?:#|\/\/|;|--)/.test(line)) continue;
    const m = SETTING.exec(line);
    const key = m?.[1] ?? m?.[2] ?? m?.[3];
    if (m && key && m[4] && key !== 'config' && (scalarOnly ? SCALAR.test(m[4]) : true)) {
      out.push({ key, value: m[4] });
      continue;
    }
    if (/^\s*config\s+:/.test(line)) for (const im of line.matchAll(INLINE_SETTING)) out.push({ key: im[1] as string, value: im[2] as string });
  }
  return out;
}

/** Pairs in `after` that are new or changed relative to `before`. */
function changed(before: Pair[], after: Pair[]): Pair[] {
  const old = new Map(before.map((p) => [p.key, p.value]));
  return after.filter((p) => old.get(p.key) !== p.value);
}

export function extractSettings(view: SessionView): Candidate[] {
  const out: Candidate[] = [];
  for (const turn of view.turns) {
    if (turn.role !== 'tool_call' || !view.isNew(turn) || toolClass(turn.toolName) !== 'edit') continue;
    const path = filePathOf(turn);
    const written = writtenTextOf(turn);
    if (path === null || written === null || LOCKFILE.test(path)) continue;
    const result = view.resultOf(turn);
    if (result?.isError) continue;
    const args = toolArgs(turn);
    const previous = typeof args?.old_string === 'string' ? args.old_string : typeof args?.old_str === 'string' ? args.old_str : null;
    const wholeFile = previous === null;
    const rel = view.relative(path);
    if (MANIFESTS.test(path)) {
      const pairs = changed(previous === null ? [] : versionsIn(path, previous), versionsIn(path, written));
      if (wholeFile && pairs.length > MAX_PER_EDIT) continue;
      for (const pair of pairs.slice(0, MAX_PER_EDIT)) {
        out.push(
          candidate(view, turn, {
            text: `Dependency ${code(pair.key)} is at ${code(pair.value)} in ${rel}.`,
            kind: 'fact',
            extractor: 'version',
            importance: 0.5,
            tags: ['version', 'dependency'],
            files: [rel],
            subject: { key: `version:${rel}#${pair.key}`, value: pair.value, onConflict: 'supersede' },
          }),
        );
      }
    } else if (CONFIG_FILE.test(path)) {
      const scalarOnly = /\.(?:exs?|[cm]?[jt]s|py)$/.test(path);
      const pairs = changed(previous === null ? [] : settingsIn(previous, scalarOnly), settingsIn(written, scalarOnly));
      if (wholeFile && pairs.length > MAX_PER_EDIT) continue;
      for (const pair of pairs.slice(0, MAX_PER_EDIT)) {
        if (/REDACTED/.test(pair.value)) continue;
        out.push(
          candidate(view, turn, {
            text: `Setting ${code(pair.key)} = ${code(pair.value)} in ${rel}.`,
            kind: 'fact',
            extractor: 'setting',
            importance: 0.5,
            tags: ['config', 'setting'],
            files: [rel],
            subject: { key: `setting:${rel}#${pair.key}`, value: pair.value, onConflict: 'supersede' },
          }),
        );
      }
    }
  }
  return out;
}
