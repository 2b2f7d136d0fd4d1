/**
 * A newcomer's first hour through the CLI, on real Claude Code transcripts (../shared/data) in a
 * temp HOME: `cairn` alone, `ingest` (what it found per project and how to see each), `recall`
 * and `list` in the home folder (nothing of this project, so they say what other projects hold
 * and the command that shows it), `status`, and following the printed commands.
 */
import { cpSync, existsSync, mkdirSync, realpathSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const TRANSCRIPTS = resolve(repoRoot, '../shared/data/transcripts/claude-code');
const present = existsSync(TRANSCRIPTS);
const REASON = `skipped: the real transcripts are absent (${TRANSCRIPTS}; CI has ../shared/data)`;
if (!present) console.warn(`[test/cli/first-hour] ${REASON}`);

describe.skipIf(!present)(present ? 'the first hour in the CLI, on real transcripts' : `the first hour in the CLI — ${REASON}`, () => {
  let home: string;
  let cairnHome: string;
  const cli = (args: string[]) => runCli(args, { home: cairnHome, cwd: home, env: { HOME: home } });

  beforeAll(() => {
    home = realpathSync(tempDir('cairn-first-hour-'));
    cairnHome = join(home, '.cairn');
    mkdirSync(join(home, '.claude', 'projects'), { recursive: true });
    cpSync(TRANSCRIPTS, join(home, '.claude', 'projects'), { recursive: true });
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('cairn alone, before anything: where the store is, nothing wired, and `cairn ingest` first', async () => {
    const run = await cli([]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`store      ${join(cairnHome, 'cairn.db')} (sqlite`);
    expect(run.stdout).toMatch(/memories {3}0 active/);
    expect(run.stdout).toContain('sessions   0 ingested · last ingest never');
    expect(run.stdout).toMatch(/agents {5}none wired · not wired: Claude Code, Codex, Gemini CLI, Cursor, VS Code/);
    expect(run.stdout).toContain('embedder   none configured');
    const next = (run.stdout.split('next:\n')[1] ?? '').trim().split('\n').map((l) => l.trim());
    expect(next).toHaveLength(3);
    expect(next[0]).toMatch(/^cairn ingest\s+read your agents' transcripts/);
    expect(next[1]).toMatch(/^cairn install claude\s+/);
  });

  it('ingest says what it found in each project, with the command to see each', async () => {
    const run = await cli(['ingest']);
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    const head = lines.findIndex((l) => /^found in \d+ projects \(memories are kept per project/.test(l));
    expect(head).toBeGreaterThan(-1);
    const rows = lines.slice(head + 1).filter((l) => /^ {2}\S/.test(l) && / sessions? +· /.test(l));
    expect(rows.length).toBeGreaterThanOrEqual(3);
    let sessions = 0;
    let corrections = 0;
    for (const row of rows) {
      const m = /(\d+) sessions? +· +(\d+) (?:memory|memories) +· +(\d+) corrections? {3,}(cairn list (?:--project \S+|--no-project))$/.exec(row);
      expect(m, row).not.toBeNull();
      sessions += Number(m?.[1]);
      corrections += Number(m?.[3]);
    }
    const total = /(\d+) sessions · \d+ new turns · \d+ tool calls · (\d+) corrections/.exec(run.stdout);
    const more = /… and (\d+) more projects?/.test(run.stdout);
    // Every session and correction is in one project's line (unless the list was cut).
    if (!more) {
      expect(sessions).toBe(Number(total?.[1]));
      expect(corrections).toBe(Number(total?.[2]));
    }
    expect(run.stdout).toContain(`this folder's project (${home}) got nothing`);
    // The commands line up in one column.
    expect(new Set(rows.map((r) => r.indexOf('cairn list'))).size).toBe(1);
    expect(run.stdout).toMatch(/^[\d,]+ of [\d,]+ files read .*\n.* · \d+ bad lines? · \d+ files? skipped$/m);
    if (more) expect(run.stdout).toContain('(cairn status --projects lists every one)');

    // Following a printed command shows that project's memories.
    const withMemories = rows.find((r) => !/ 0 memories/.test(r)) as string;
    const command = /(cairn list .+)$/.exec(withMemories)?.[1] as string;
    const project = /--project (\S+)/.exec(command)?.[1] as string;
    const listed = await cli(['list', '--project', project, '--json']);
    const memories = listed.json<Array<{ project: string | null }>>();
    expect(memories.length).toBeGreaterThan(0);
    expect(memories.every((m) => m.project === project || m.project === null)).toBe(true);
  });

  it('recall with nothing in this project says how many match elsewhere and the command; that command finds them', async () => {
    const here = await cli(['recall', 'test']);
    expect(here.code).toBe(0);
    const m = /^no memories match "test" in this project \((.+)\); (\d+)\+? match(?:es)? in other projects: (cairn recall test --all-projects)$/m.exec(here.stdout);
    expect(m, here.stdout).not.toBeNull();
    expect(m?.[1]).toBe(home);
    const all = await cli(['recall', 'test', '--all-projects', '--json']);
    const hits = all.json<{ hits: Array<{ memory: { project: string | null } }> }>().hits;
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.some((h) => h.memory.project !== null && h.memory.project !== home)).toBe(true);
    const json = (await cli(['recall', 'test', '--json'])).json<{ hits: unknown[]; elsewhere: { matches: number; command: string } }>();
    expect(json.elsewhere.matches).toBe(Math.min(Number(m?.[2]), 50));
    expect(json.elsewhere.command).toBe('cairn recall test --all-projects');
  });

  it('list says what the other projects hold and how to see them', async () => {
    const run = await cli(['list']);
    expect(run.code).toBe(0);
    const said = `${run.stdout}\n${run.stderr}`;
    expect(said).toMatch(/(?:no memories in this project \(.+\); |also )\d+ memories in \d+ other projects[^:]*: cairn list --all-projects, or cairn list --project \S+/);
    expect((await cli(['list', '--all-projects', '-n', '5'])).stdout.trim().split('\n')).toHaveLength(5);
  });

  it('status counts this project, the user-wide memories and the other projects', async () => {
    const run = await cli(['status']);
    expect(run.stdout).toMatch(/^here {9}0 in this project · \d+ user-wide/m);
    expect(run.stdout).toMatch(/^elsewhere {4}\d+ memories in \d+ other projects.*: cairn list --all-projects/m);
    // Every other project is listed by name with --projects (without it, the ten biggest and how many more).
    const named = (out: string) => out.split('\n').filter((l) => /^ {15} +\d+ {2}\S/.test(l)).length;
    const others = Number(/in (\d+) other projects/.exec(run.stdout)?.[1]);
    expect(named(run.stdout)).toBe(Math.min(10, others));
    if (others > 10) expect(run.stdout).toContain(`… and ${others - 10} more: cairn status --projects lists every one`);
    expect(named((await cli(['status', '--projects'])).stdout)).toBe(others);
    const json = (await cli(['status', '--json'])).json<{ stats: { active: number }; spread: { here: number; userWide: number; noProject: number; otherTotal: number } }>();
    const s = json.spread;
    expect(s.here + s.userWide + s.noProject + s.otherTotal).toBe(json.stats.active);
    expect(s.otherTotal).toBeGreaterThan(0);
  });

  it('cairn alone after ingest and install: counts, Claude Code wired, and the next commands', async () => {
    expect((await cli(['install', 'claude'])).code).toBe(0);
    const run = await cli([]);
    expect(run.stdout).toMatch(/memories {3}\d+ active: 0 in this project \(.+\) · .*\d+ in \d+ other projects/);
    expect(run.stdout).toMatch(/sessions {3}\d+ ingested · last ingest \d{4}-\d\d-\d\d \d\d:\d\d/);
    expect(run.stdout).toMatch(/agents {5}wired: Claude Code \(hooks \+ MCP\) · not wired: Codex, Gemini CLI, Cursor, VS Code/);
    const next = (run.stdout.split('next:\n')[1] ?? '').trim().split('\n').map((l) => l.trim());
    expect(next).toHaveLength(3);
    expect(next[0]).toMatch(/^cairn list --project \S+\s+the \d+ memories of /);
    expect(next.join('\n')).not.toContain('cairn install claude');
    const json = (await cli(['--json'])).json<{ next: Array<{ command: string }>; agents: Array<{ agent: string; hooks: boolean; mcp: boolean }> }>();
    expect(json.agents.find((a) => a.agent === 'claude')).toMatchObject({ hooks: true, mcp: true });
    expect(json.next).toHaveLength(3);
  });

  it('an unknown command is still an unknown command', async () => {
    const run = await cli(['recal', 'x']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("cairn: unknown command 'recal'");
  });
});
