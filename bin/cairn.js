#!/usr/bin/env node
// Hooks run on every prompt and session start: load one bundled module, not the whole CLI.
// A hook must never break the agent, so even a failure to load exits 0.
if (process.argv[2] === 'hook') {
  try {
    const { existsSync } = await import('node:fs');
    const bundle = new URL('../dist/hooks-bundle/run.js', import.meta.url);
    const { hookMain } = await import(existsSync(bundle) ? bundle.href : '../dist/hooks/run.js');
    process.exitCode = await hookMain(process.argv.slice(3));
  } catch (error) {
    process.stderr.write(`cairn hook: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 0;
  }
} else if (process.argv[2] === 'mcp' && process.argv.length === 3) {
  // The MCP server lives as long as the agent session: load only what it serves with.
  const { mcpMain } = await import('../dist/mcp/stdio.js');
  process.exitCode = await mcpMain();
} else {
  const { main } = await import('../dist/cli/main.js');
  process.exitCode = await main(process.argv.slice(2));
}
