/**
 * Aider chat history (`.aider.chat.history.md`, one per repository): `# aider chat started at …`
 * opens a session, `#### ` lines are the user's, `> ` lines are Aider's own output (commands,
 * lint, token counts, `^C KeyboardInterrupt`), everything else is the assistant.
 *
 * A message is only known to be complete when the next one starts, so the last block of a pass
 * is emitted but the cursor is rewound to its first line: the next pass reads it again and the
 * turn (same id, same seq) is updated with whatever was appended.
 */
import type { BatchBuilder, SessionAcc } from '../builder.js';
import { num, obj, shortHash, str } from '../text.js';
import { stateObject, type LineParser } from './shared.js';

const HEADER = '# aider chat started at ';
const TOKENS = /^Tokens: ([\d.,]+k?) sent(?:, ([\d.,]+k?) cache write)?(?:, ([\d.,]+k?) cache hit)?, ([\d.,]+k?) received/;
/** The first ^C stops the model; a second one within two seconds exits Aider (not a correction). */
const INTERRUPT = /^\^C again to exit/;

type Kind = 'user' | 'tool' | 'assistant';

interface Block {
  kind: Kind;
  line: number;
  offset: number;
  lines: string[];
  lastLine: number;
  /** The last line ended with a markdown hard break (two spaces). */
  hardBreak: boolean;
  /** Inside a fenced code block (assistant blocks only). */
  fence: boolean;
}

/** Tokens counted from the block a pass ended in, taken back when the next pass re-reads it. */
interface PendingTokens {
  session: string;
  i: number;
  o: number;
  r: number;
  c: number;
}

function tokenCount(value: string | undefined): number {
  if (value === undefined) return 0;
  const k = value.endsWith('k');
  const n = Number.parseFloat(value.replaceAll(',', '').replace(/k$/, ''));
  return Number.isFinite(n) ? Math.round(k ? n * 1000 : n) : 0;
}

/** Aider writes local time without a zone. */
function headerTime(text: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})/.exec(text);
  if (m === null) return null;
  const t = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])).getTime();
  return Number.isNaN(t) ? null : t;
}

export function createAiderParser(builder: BatchBuilder, path: string, raw: unknown): LineParser {
  const state = stateObject(raw);
  const fileId = shortHash(path);
  const dir = path.slice(0, Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'))) || null;
  let sessionId = str(state.session) ?? `aider-${fileId}-0`;
  let sessionAt = typeof state.at === 'number' ? state.at : null;
  let block: Block | null = null;
  const pending = obj(state.pending);
  if (pending !== null && typeof pending.session === 'string' && builder.hasSession(pending.session)) {
    const s = builder.session(pending.session);
    s.inputTokens -= num(pending.i);
    s.outputTokens -= num(pending.o);
    s.cacheReadTokens -= num(pending.r);
    s.cacheCreationTokens -= num(pending.c);
  }
  /** Kind of the block before the current one: a ^C right after a prompt or an answer stopped the model. */
  let previousKind: Kind | null = state.previous === 'user' || state.previous === 'assistant' || state.previous === 'tool' ? state.previous : null;

  function session(): SessionAcc {
    const s = builder.session(sessionId);
    if (s.cwd === null) s.cwd = dir;
    return s;
  }

  function emit(b: Block): void {
    const s = session();
    const text = b.lines.join('\n').trim();
    if (text.length === 0) return;
    const at = sessionAt;
    if (b.kind === 'user') {
      const command = text.startsWith('/');
      const turn = builder.turn(s, { role: 'user', text, uuid: null, line: b.line, at, flags: command ? ['slash-command'] : [] });
      if (turn !== null && !command) builder.title(s, turn.text, false);
      return;
    }
    if (b.kind === 'assistant') {
      builder.stats.assistantMessages++;
      builder.turn(s, { role: 'assistant', text, uuid: null, line: b.line, at });
      return;
    }
    // A ^C that stopped the model comes right after the prompt or the partial answer, before
    // any output of Aider's own (a ^C after "Tokens: …" only left the idle prompt).
    const firstOutput = b.lines.find((line) => line.trim().length > 0) ?? '';
    const interrupted = INTERRUPT.test(firstOutput) && (previousKind === 'user' || previousKind === 'assistant');
    for (const line of b.lines) {
      const tokens = TOKENS.exec(line);
      if (tokens !== null) {
        const cacheWrite = tokenCount(tokens[2]);
        const cacheHit = tokenCount(tokens[3]);
        s.inputTokens += Math.max(0, tokenCount(tokens[1]) - cacheHit - cacheWrite);
        s.cacheCreationTokens += cacheWrite;
        s.cacheReadTokens += cacheHit;
        s.outputTokens += tokenCount(tokens[4]);
      }
    }
    builder.turn(s, { role: 'system', text, uuid: null, line: b.line, at, flags: ['tool-output'] });
    if (interrupted) builder.turn(s, { role: 'user', text: '[interrupted by user: ^C]', uuid: null, line: b.line, at, flags: ['interrupt'] });
  }

  /** Close the current block (a blank line ends a prompt or an Aider message). */
  function close(): void {
    if (block === null) return;
    emit(block);
    previousKind = block.kind;
    block = null;
  }

  return {
    line(text, lineNo, offset) {
      const current = block as Block | null;
      // Inside a fenced code block of an answer, lines are the answer's (`>>>>>>> REPLACE`…),
      // unless Aider itself speaks again: a session header, or a prompt / output line after a
      // blank line (an answer cut off mid-fence never closes it).
      const aiderAgain =
        text.startsWith(HEADER) || (current !== null && lineNo > current.lastLine + 1 && (text.startsWith('####') || text.startsWith('> ') || text === '>'));
      if (current !== null && current.kind === 'assistant' && current.fence && !aiderAgain) {
        for (let gap = current.lastLine + 1; gap < lineNo; gap++) current.lines.push('');
        current.lines.push(text.trimEnd());
        current.lastLine = lineNo;
        if (text.trimStart().startsWith('```')) current.fence = false;
        return;
      }
      if (text.startsWith(HEADER)) {
        close();
        previousKind = null;
        // Keyed by when it started and where it sits in the (append-only) file, not by the
        // file's path: a moved or copied repository does not duplicate its history.
        const stamp = text.slice(HEADER.length).trim().replace(/[^0-9]/g, '');
        sessionId = `aider-${stamp.length > 0 ? stamp : fileId}-${lineNo}`;
        sessionAt = headerTime(text.slice(HEADER.length));
        builder.time(session(), sessionAt);
        return;
      }
      const blank = text.trim().length === 0;
      // Empty lines never reach us (the line scanner drops them): a gap in line numbers is one.
      if (current !== null && current.kind !== 'assistant' && (blank || lineNo > current.lastLine + 1)) close();
      if (blank) return;
      let kind: Kind;
      let content: string;
      if (text.startsWith('####')) {
        kind = 'user';
        content = text.slice(text.startsWith('#### ') ? 5 : 4).trimEnd();
      } else if (text === '>' || text.startsWith('> ')) {
        kind = 'tool';
        content = text.slice(text.startsWith('> ') ? 2 : 1).trimEnd();
      } else {
        // Aider prefixes only the first line of a multi-line message of its own with "> ", and
        // ends prefixed lines with a markdown hard break ("  ") unless the message continues.
        const open = block as Block | null;
        const continues = open !== null && open.kind === 'tool' && open.lastLine === lineNo - 1 && !open.hardBreak;
        kind = continues ? 'tool' : 'assistant';
        content = text.trimEnd();
      }
      const hardBreak = text.endsWith('  ');
      const open = block as Block | null;
      if (open !== null && open.kind === kind) {
        for (let gap = open.lastLine + 1; gap < lineNo; gap++) open.lines.push('');
        open.lines.push(content);
        open.lastLine = lineNo;
        open.hardBreak = hardBreak;
        if (kind === 'assistant' && content.trimStart().startsWith('```')) open.fence = true;
        return;
      }
      close();
      block = { kind, line: lineNo, offset, lines: [content], lastLine: lineNo, hardBreak, fence: kind === 'assistant' && content.trimStart().startsWith('```') };
    },
    end() {
      const open = block as Block | null;
      const state = { session: sessionId, at: sessionAt, previous: previousKind, pending: null as PendingTokens | null };
      if (open === null) return { state };
      // Emit the open block (it may still grow), keep its tokens in this pass's totals, and
      // note them so the next pass, which reads the block again, does not count them twice.
      const s = session();
      const seq = s.seq;
      const before: PendingTokens = { session: s.id, i: s.inputTokens, o: s.outputTokens, r: s.cacheReadTokens, c: s.cacheCreationTokens };
      emit(open);
      s.seq = seq;
      state.pending = {
        session: s.id,
        i: s.inputTokens - before.i,
        o: s.outputTokens - before.o,
        r: s.cacheReadTokens - before.r,
        c: s.cacheCreationTokens - before.c,
      };
      return { state, rewind: { offset: open.offset, line: open.line - 1 } };
    },
  };
}
