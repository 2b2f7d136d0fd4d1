/**
 * Where the ONNX models' files live and whether they are in place (sizes only): what resolving the
 * default embedder needs on every hook, kept apart from the runtime code in `onnx.ts` so that a
 * process which never embeds does not load it (docs/BENCHMARKS.md, hooks notes).
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OnnxModelManifest } from './onnx-models.js';

/** The package root (`models/` ships there): the nearest folder above this file with a package.json. */
export const PACKAGE_ROOT = packageRoot(path.dirname(fileURLToPath(import.meta.url)));

function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, '..', '..');
  }
}

/** The command that puts a known model's files in place. */
export const FETCH_COMMAND = `node ${path.join(PACKAGE_ROOT, 'scripts', 'fetch-model.mjs')}`;

/**
 * Where `onnx:<name>` lives: `<home>/models/<name>` when that folder exists, else the copy inside
 * the package (`<package>/models/<name>`, where `scripts/fetch-model.mjs` puts it at install).
 */
export function onnxModelFolder(name: string, home?: string, packageModels = path.join(PACKAGE_ROOT, 'models')): string {
  const inHome = home ? path.join(home, 'models', name) : null;
  if (inHome && existsSync(inHome)) return inHome;
  return path.join(packageModels, name);
}

/** The fix named in a model-file problem: the fetch command (with `--dest` unless it is the package's copy). */
export function fixFor(folder: string, manifest: OnnxModelManifest): string {
  const dest = path.resolve(folder) === path.join(PACKAGE_ROOT, 'models', manifest.name) ? '' : ` --dest ${folder}`;
  return `run \`${FETCH_COMMAND} ${manifest.name}${dest}\` to fetch it again`;
}

/**
 * The cheap half of {@link checkOnnxModel}, synchronous: every file present and of its recorded
 * size (a few `stat` calls; what config resolution and `status` afford). Null when all is well.
 */
export function checkOnnxModelSizes(folder: string, manifest: OnnxModelManifest): string | null {
  for (const file of manifest.files) {
    const full = path.join(folder, file.name);
    let size: number;
    try {
      const info = statSync(full);
      if (!info.isFile()) return `model file ${full} is missing; ${fixFor(folder, manifest)}`;
      size = info.size;
    } catch {
      return `model file ${full} is missing; ${fixFor(folder, manifest)}`;
    }
    if (size !== file.bytes) return `model file ${full} is ${size} bytes, expected ${file.bytes} (truncated or replaced); ${fixFor(folder, manifest)}`;
  }
  return null;
}
