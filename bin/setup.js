// When cairn runs from a checkout that was never built — a Claude Code plugin installed from a
// git URL or a marketplace has the sources but no dist/ (gitignored) and no node_modules — this
// decides what to run instead, and says so: it never fails silently.
//
//   1. an installed, built cairn (`npm install -g cairn-memory`, or any build whose `cairn` bin is
//      on PATH) runs in its place;
//   2. otherwise cairn builds itself once, on first run: `npm install` in the plugin's folder
//      (which builds through `prepare`), started in the background so the agent is not kept
//      waiting; until it is done every hook tells the user what is happening and where the log is.
//
// Plain JavaScript with no dependencies: it runs before anything is installed.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, realpathSync, statSync, writeSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const PACKAGE_NAME = 'cairn-memory';
const SETUP_LOG = '.cairn-setup.log';
const SETUP_LOCK = '.cairn-setup.lock';
/** A setup older than this that never finished is taken as dead. */
const STALE_SETUP_MS = 15 * 60 * 1000;

export const packageRootOf = (binUrl) => dirname(dirname(fileURLToPath(binUrl)));

/** Whether `root` holds a built cairn (its dependencies may sit in a node_modules above it). */
export function isBuilt(root) {
  return existsSync(join(root, 'dist', 'cli', 'main.js'));
}

function ourPackageRoot(path) {
  let dir = dirname(path);
  for (let i = 0; i < 6; i++) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if (JSON.parse(readFileSync(manifest, 'utf8')).name === PACKAGE_NAME) return dir;
      } catch {
        return null;
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
  return null;
}

/** A built cairn elsewhere whose `cairn` bin is on PATH (never this unbuilt copy, never someone else's package). */
export function findInstalledCairn(env, selfRoot) {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'cairn');
    if (!existsSync(candidate)) continue;
    let real;
    try {
      real = realpathSync(candidate);
    } catch {
      continue;
    }
    const root = ourPackageRoot(real);
    if (root && realpathSync(root) !== realpathSync(selfRoot) && isBuilt(root)) return join(root, 'bin', 'cairn.js');
  }
  return null;
}

function setupState(root, now) {
  const lock = join(root, SETUP_LOCK);
  if (!existsSync(lock)) return existsSync(join(root, SETUP_LOG)) ? 'failed' : 'none';
  const age = now - statSync(lock).mtimeMs;
  return age > STALE_SETUP_MS ? 'failed' : 'running';
}

/**
 * Start the one-time setup in the background (`npm install`, which builds through `prepare`),
 * unless it is running or failed before. Returns the state after the call.
 */
export function startSetup(root, env, now = Date.now()) {
  const state = setupState(root, now);
  if (state !== 'none') return state;
  if (env.CAIRN_PLUGIN_SETUP === '0') return 'disabled';
  let fd;
  try {
    fd = openSync(join(root, SETUP_LOCK), 'wx');
  } catch {
    return 'running';
  }
  writeSync(fd, `${process.pid}\n`);
  closeSync(fd);
  const log = openSync(join(root, SETUP_LOG), 'a');
  const npm = env.CAIRN_NPM || (process.platform === 'win32' ? 'npm.cmd' : 'npm');
  // On success the lock and the log go; on failure the log stays and names what broke.
  const script =
    `"${npm}" install --no-audit --no-fund && rm -f "${SETUP_LOCK}" "${SETUP_LOG}" || ` +
    `{ echo "cairn setup failed; run: cd '${root}' && npm install" >> "${SETUP_LOG}"; rm -f "${SETUP_LOCK}"; }`;
  const child = spawn('sh', ['-c', script], { cwd: root, detached: true, stdio: ['ignore', log, log], env });
  child.unref();
  closeSync(log);
  return 'running';
}

/** What the user reads while cairn is not runnable. */
export function unavailableMessage(root, state) {
  const manual = `cd "${root}" && npm install`;
  switch (state) {
    case 'running':
      return `cairn is setting itself up (first run: npm install and build in ${root}, about a minute; log: ${join(root, SETUP_LOG)}). Memory starts with the next session.`;
    case 'failed':
      return `cairn could not set itself up: see ${join(root, SETUP_LOG)}; fix it and run: ${manual} (or install cairn with: npm install -g ${PACKAGE_NAME}), then delete the log.`;
    default:
      return `cairn is not built in ${root}: run ${manual} (or install cairn with: npm install -g ${PACKAGE_NAME}).`;
  }
}

/**
 * Say it where the user (and, at session start, the model) will see it: Claude Code and Codex
 * show a hook's `systemMessage`; the MCP client shows the server's stderr and exit status.
 */
export function report(command, event, message, io = process) {
  if (command === 'hook' && (event === 'session-start' || event === 'prompt')) {
    const hookEventName = event === 'session-start' ? 'SessionStart' : 'UserPromptSubmit';
    const value = {
      systemMessage: message,
      hookSpecificOutput: { hookEventName, additionalContext: `cairn memory is unavailable in this session: ${message}` },
    };
    io.stdout.write(`${JSON.stringify(value)}\n`);
    io.stderr.write(`cairn: ${message}\n`);
    return 0;
  }
  io.stderr.write(`cairn: ${message}\n`);
  // A hook that only ingests stays non-blocking (exit 1 is shown, exit 2 would block the agent).
  return 1;
}

/** Run an installed cairn's bin in this process, with the same argv. */
export async function delegate(bin) {
  await import(pathToFileURL(bin).href);
}
