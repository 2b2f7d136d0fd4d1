import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | null = null;

/**
 * The folder of cairn's package.json, found by walking up from this module. Works from src/
 * (tests), dist/ (the build) and dist/hooks-bundle/hook.cjs (the bundled hooks) alike.
 */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      try {
        if ((JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string }).name === 'cairn-memory') return (cached = dir);
      } catch {
        // not ours; keep walking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the cairn package root');
    dir = parent;
  }
}

/** A path inside the package: `packagePath('bin', 'cairn.js')`. */
export function packagePath(...parts: string[]): string {
  return join(packageRoot(), ...parts);
}

export function packageVersion(): string {
  return (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;
}
