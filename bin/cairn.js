#!/usr/bin/env node
// The one entry for the CLI, the hooks and the MCP server. Hooks run on every prompt and session
// start: they load one bundled file, not the whole CLI — installed hooks through bin/cairn-hook.cjs
// directly (no ES module loader), `cairn hook EVENT` through the same loader from here. A checkout that was never built (a
// plugin installed from git) goes through setup.js, which runs an installed cairn or builds this
// one on first run, and says so instead of failing silently.
import { createRequire } from 'node:module';

// node:fs through require: an ESM import of it builds a namespace of every export, which loads
// Node's whole streams stack (19 modules) on every hook.
const require = createRequire(import.meta.url);
const { existsSync, readFileSync } = require('node:fs');

const [command, event] = process.argv.slice(2);
const wantsHelp = process.argv.includes('--help') || process.argv.includes('-h');

// `cairn … | head`: the reader left; stop quietly instead of an EPIPE stack trace. Not for the
// hooks: they write to fd 1 directly, and creating the stdout/stderr streams loads the stream and
// net modules (~5 ms of every prompt).
if (command !== 'hook' || wantsHelp) {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error) => {
      if (error && error.code === 'EPIPE') process.exit(0);
      throw error;
    });
  }
}

if (process.argv.length === 3 && (command === '--version' || command === '-V')) {
  // Answered without loading the CLI: a version check costs a bare node start.
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}
`);
} else if (!existsSync(new URL('../dist/cli/main.js', import.meta.url))) {
  const setup = await import('./setup.js');
  const root = setup.packageRootOf(import.meta.url);
  const installed = setup.findInstalledCairn(process.env, root);
  if (installed) await setup.delegate(installed);
  else process.exitCode = setup.report(command, event, setup.unavailableMessage(root, setup.startSetup(root, process.env)));
} else if (command === 'hook' && !wantsHelp) {
  // The installed hooks run bin/cairn-hook.cjs directly (no ES module loader); this older form of
  // the command runs the same loader: the CommonJS hooks bundle with V8's code cache.
  require('./cairn-hook.cjs').main(process.argv.slice(3));
} else if (command === 'mcp' && process.argv.length === 3) {
  // The MCP server lives as long as the agent session: load only what it serves with.
  const { mcpMain } = await import('../dist/mcp/stdio.js');
  process.exitCode = await mcpMain();
} else {
  const { main } = await import('../dist/cli/main.js');
  process.exitCode = await main(process.argv.slice(2));
}
