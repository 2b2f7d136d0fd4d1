// Reference copy of src/ingest/facts/shell-read.ts as of a63e38d, for facts-differential.test.ts: the extractor's
// output must stay identical to this one's. Never edited; removed once a change of output is intended.
/**
 * Shell commands that print part of one file: how agents without a read tool read code (Codex runs
 * `sed -n '40,80p' src/x.ts`, `nl -ba src/x.ts | sed -n '40,80p'`, `cat -n`, `head`). Their output
 * is that file's text, so its definitions can be kept with their path and line as a read's are.
 */

/** What a file-printing command's output is: which file, and how its lines are numbered. */
export interface ShellRead {
  path: string;
  /** The output numbers its lines itself (`cat -n`, `nl`): `   40\tcode`. */
  numbered: boolean;
  /** Otherwise the line number of the output's first line, when the command fixes it. */
  firstLine: number | null;
}

/** A plain path argument: no globs, pipes, redirections, variables or options. */
const PATH = /^(?:\.{0,2}\/)?[\w@.+-]+(?:\/[\w@.+-]+)*$/;
/** A file name with an extension, or a dotfile: what is read as code or config. */
const FILE_LIKE = /(?:^|\/)[\w@+-]*\.[A-Za-z0-9]{1,10}$/;

function unquote(word: string): string {
  return word.length >= 2 && (word[0] === "'" || word[0] === '"') && word.at(-1) === word[0] ? word.slice(1, -1) : word;
}

function pathArg(word: string | undefined): string | null {
  if (word === undefined) return null;
  const path = unquote(word);
  return PATH.test(path) && FILE_LIKE.test(path) ? path : null;
}

/** `sed -n '40,80p'` / `sed -n 40p`: the first line it prints. */
function sedStart(script: string): number | null {
  const m = /^(\d{1,7})(?:,(?:\d{1,7}|\$))?p$/.exec(unquote(script));
  return m === null ? null : Number(m[1]);
}

/** One simple command's words (no quoting inside words beyond a whole quoted word). */
function words(command: string): string[] {
  return command.trim().split(/\s+/).filter((w) => w.length > 0);
}

/** The file one simple command prints, and how (null when it is not such a command). */
function printer(command: string): ShellRead | null {
  const w = words(command);
  switch (w[0]) {
    case 'cat': {
      if (w.length === 2) return wrap(pathArg(w[1]), false, 1);
      if (w.length === 3 && w[1] === '-n') return wrap(pathArg(w[2]), true, null);
      return null;
    }
    case 'nl': {
      const path = pathArg(w.at(-1));
      const options = w.slice(1, -1);
      return options.every((o) => o === '-ba' || o === '-b' || o === 'a' || o === '-nln') ? wrap(path, true, null) : null;
    }
    case 'head': {
      if (w.length === 2) return wrap(pathArg(w[1]), false, 1);
      if (w.length === 4 && w[1] === '-n' && /^\d+$/.test(w[2] as string)) return wrap(pathArg(w[3]), false, 1);
      if (w.length === 3 && /^-\d+$/.test(w[1] as string)) return wrap(pathArg(w[2]), false, 1);
      return null;
    }
    case 'sed': {
      if (w.length === 4 && w[1] === '-n') {
        const start = sedStart(w[2] as string);
        return start === null ? null : wrap(pathArg(w[3]), false, start);
      }
      return null;
    }
    default:
      return null;
  }
}

function wrap(path: string | null, numbered: boolean, firstLine: number | null): ShellRead | null {
  return path === null ? null : { path, numbered, firstLine };
}

/**
 * The file a command prints, if it is one of the common ways to print part of a file: `cat`,
 * `cat -n`, `nl -ba`, `head [-n N]`, `sed -n 'A,Bp'`, a numbering command piped into `sed -n`
 * or `head`, optionally after `cd DIR &&`. Anything else (globs, several files, other pipes): null.
 */
export function shellRead(command: string | null | undefined): ShellRead | null {
  if (typeof command !== 'string' || command.length > 400 || /[;`$<>*?]|\|\||&&.*&&/.test(command)) return null;
  let rest = command.trim();
  const cd = /^cd\s+\S+\s*&&\s*/.exec(rest);
  if (cd !== null) {
    // The path is relative to a folder the command named: keep it only when it is absolute.
    rest = rest.slice(cd[0].length);
  }
  if (rest.includes('&')) return null;
  const stages = rest.split('|');
  if (stages.length > 2) return null;
  const read = printer(stages[0] as string);
  if (read === null) return null;
  if (cd !== null && !read.path.startsWith('/')) return null;
  if (stages.length === 1) return read;
  // A second stage that only narrows the lines: numbered output keeps its numbers; otherwise the
  // first line is no longer known unless the stage is `head` (which keeps the start).
  const narrow = words(stages[1] as string);
  const isSed = narrow.length === 3 && narrow[0] === 'sed' && narrow[1] === '-n' && sedStart(narrow[2] as string) !== null;
  const isHead = narrow[0] === 'head' && (narrow.length === 1 || (narrow.length === 3 && narrow[1] === '-n' && /^\d+$/.test(narrow[2] as string)) || (narrow.length === 2 && /^-\d+$/.test(narrow[1] as string)));
  if (!isSed && !isHead) return null;
  if (read.numbered) return read;
  if (isHead) return read;
  const start = sedStart(narrow[2] as string);
  return read.firstLine === 1 && start !== null ? { ...read, firstLine: start } : { ...read, firstLine: null };
}

/**
 * Codex's `exec_command` output starts with a header (`Chunk ID`, `Wall time`, `Process exited
 * with code`, `Original token count`, then `Output:`): the file's lines start after it.
 */
const CODEX_HEADER = /^(?:Chunk ID: [^\n]*\n)?(?:Wall time: [^\n]*\n)(?:Process exited with code -?\d+\n)?(?:Original token count: \d+\n)?Output:\n/;

/** The printed text without a client's header above it. */
export function printedText(output: string): string {
  const m = CODEX_HEADER.exec(output.length > 400 ? output.slice(0, 400) : output);
  return m === null ? output : output.slice(m[0].length);
}
