/**
 * Regenerating part of docs/BENCHMARKS.md: `cairn bench <suite> --write-docs` replaces the sections
 * of the suites it ran (and their rows in "Where cairn stands") and keeps every other section as it
 * was, so a suite can be re-measured without re-running all of them. Each suite section names the
 * command, commit and load it was measured with, so a page assembled from several runs stays honest.
 *
 * Notes written by hand inside a suite section go below {@link KEEP_MARKER}; they survive the
 * section's regeneration.
 */

/** Lines after this one in a suite section are kept when the section is regenerated. */
export const KEEP_MARKER = '<!-- notes below are written by hand and kept when this section is regenerated -->';

const STANDING = 'Where cairn stands';
const METHOD = 'How these are measured';
const CHARTS = 'Charts';

interface Section {
  title: string;
  lines: string[];
}

interface Page {
  preamble: string[];
  sections: Section[];
}

function parse(text: string): Page {
  const page: Page = { preamble: [], sections: [] };
  let current: string[] = page.preamble;
  for (const line of text.replace(/\n+$/, '').split('\n')) {
    const heading = /^## (.+)$/.exec(line);
    if (heading) {
      const section = { title: heading[1]!.trim(), lines: [line] };
      page.sections.push(section);
      current = section.lines;
    } else current.push(line);
  }
  return page;
}

/** The suite a row of the standing table is about (`| [recall](#recall) | …`). */
const rowSuite = (line: string): string | null => /^\| \[([^\]]+)\]\(#/.exec(line)?.[1] ?? null;

function mergeStanding(old: Section, fresh: Section, regenerated: ReadonlySet<string>): Section {
  const freshRows = new Map<string, string>();
  for (const line of fresh.lines) {
    const suite = rowSuite(line);
    if (suite) freshRows.set(suite, line);
  }
  const lines = old.lines.map((line) => {
    const suite = rowSuite(line);
    return suite && regenerated.has(suite) && freshRows.has(suite) ? freshRows.get(suite)! : line;
  });
  return { title: old.title, lines };
}

function trimEnd(lines: string[]): string[] {
  const out = [...lines];
  while (out.length > 0 && out[out.length - 1]!.trim() === '') out.pop();
  return out;
}

/** The regenerated section, followed by the hand-written notes the old one kept below the marker. */
function withNotes(fresh: Section, old: Section | undefined): Section {
  const at = old?.lines.indexOf(KEEP_MARKER) ?? -1;
  if (!old || at < 0) return fresh;
  return { title: fresh.title, lines: [...trimEnd(fresh.lines), '', ...old.lines.slice(at)] };
}

/**
 * The page `existing` with the sections of `regenerated` suites taken from `fresh` (a page rendered
 * from a run of just those suites). Sections `existing` lacks are added before the method section.
 *
 * @example
 * writeFileSync(path, mergeDocs(readFileSync(path, 'utf8'), renderDocs(report), new Set(['hooks'])));
 */
export function mergeDocs(existing: string, fresh: string, regenerated: ReadonlySet<string>): string {
  const old = parse(existing);
  const next = parse(fresh);
  const freshByTitle = new Map(next.sections.map((s) => [s.title, s]));
  const oldTitles = new Set(old.sections.map((s) => s.title));
  const out: Section[] = [];
  for (const section of old.sections) {
    const replacement = freshByTitle.get(section.title);
    if (section.title === STANDING && replacement) out.push(mergeStanding(section, replacement, regenerated));
    else if (section.title === METHOD && replacement) out.push(replacement);
    else if (section.title === CHARTS) out.push(section);
    else if (regenerated.has(section.title) && replacement) out.push(withNotes(replacement, section));
    else out.push(section);
  }
  const added = next.sections.filter((s) => regenerated.has(s.title) && !oldTitles.has(s.title));
  if (added.length > 0) {
    const method = out.findIndex((s) => s.title === METHOD);
    out.splice(method < 0 ? out.length : method, 0, ...added);
  }
  const body = out.flatMap((s) => trimEnd(s.lines).concat(''));
  return `${[...trimEnd(old.preamble), '', ...body].join('\n').replace(/\n+$/, '')}\n`;
}
