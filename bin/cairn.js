#!/usr/bin/env node
// Hooks run on every prompt and session start: load only what they need.
if (process.argv[2] === 'hook') {
  const { hookMain } = await import('../dist/hooks/run.js');
  process.exitCode = await hookMain(process.argv.slice(3));
} else {
  const { main } = await import('../dist/cli/main.js');
  process.exitCode = await main(process.argv.slice(2));
}
