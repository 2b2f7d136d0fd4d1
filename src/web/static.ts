/**
 * The page's files, served from src/web/static/ (found from src/web and from dist/web alike:
 * both sit two levels below the package root). No build step: plain ES modules and CSS. Only
 * files present at start-up are served, so no request path ever reaches the file system.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const STATIC_DIR = fileURLToPath(new URL('../../src/web/static/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
  '.ico': 'image/x-icon',
};

export interface StaticFile {
  body: string;
  type: string;
}

/** Every servable file under `dir`, keyed by URL path (`/app.js`, `/views/list.js` …). */
export function loadStatic(dir: string = STATIC_DIR): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const walk = (folder: string): void => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const type = TYPES[extname(name)];
        if (type) files.set(`/${relative(dir, path).split(sep).join('/')}`, { body: readFileSync(path, 'utf8'), type });
      }
    }
  };
  walk(dir);
  return files;
}
