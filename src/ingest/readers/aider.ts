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
import { shortHash, str } from '../text.js';
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
    if (interrupted) builder.turn(s, { role: 'user', text: '^C KeyboardInterrupt', uuid: null, line: b.line, at, flags: ['interrupt'] });
  }

  return {
    line(text, lineNo, offset) {
      if (text.startsWith(HEADER)) {
        if (block !== null) emit(block);
        block = null;
        previousKind = null;
        sessionId = `aider-${fileId}-${lineNo}`;
        sessionAt = headerTime(text.slice(HEADER.length));
        builder.time(session(), sessionAt);
        return;
      }
      let kind: Kind;
      let content: string;
      if (text.startsWith('####')) {
        kind = 'user';
        content = text.slice(text.startsWith('#### ') ? 5 : 4).trimEnd();
      } else if (text.startsWith('>')) {
        kind = 'tool';
        content = text.slice(text.startsWith('> ') ? 2 : 1).trimEnd();
      } else {
        if (text.trim().length === 0) {
          if (block !== null) block.lines.push('');
          return;
        }
        // Aider prefixes only the first line of a multi-line message of its own with "> ", and
        // ends prefixed lines with a markdown hard break ("  ") unless the message continues.
        const continues = block !== null && block.kind === 'tool' && block.lastLine === lineNo - 1 && !block.hardBreak;
        kind = continues ? 'tool' : 'assistant';
        content = text.trimEnd();
      }
      const hardBreak = text.endsWith('  ');
      if (block !== null && block.kind === kind) {
        for (let gap = block.lastLine + 1; gap < lineNo; gap++) block.lines.push('');
        block.lines.push(content);
        block.lastLine = lineNo;
        block.hardBreak = hardBreak;
        return;
      }
      if (block !== null) {
        emit(block);
        previousKind = block.kind;
      }
      block = { kind, line: lineNo, offset, lines: [content], lastLine: lineNo, hardBreak };
    },
    end() {
      const open = block as Block | null;
      if (open === null) return { state: { session: sessionId, at: sessionAt, previous: previousKind } };
      // Emit the open block, then undo its effect on the session so the next pass can redo it.
      const s = session();
      const before = { seq: s.seq, i: s.inputTokens, o: s.outputTokens, r: s.cacheReadTokens, c: s.cacheCreationTokens };
      emit(open);
      s.seq = before.seq;
      s.inputTokens = before.i;
      s.outputTokens = before.o;
      s.cacheReadTokens = before.r;
      s.cacheCreationTokens = before.c;
      return { state: { session: sessionId, at: sessionAt, previous: previousKind }, rewind: { offset: open.offset, line: open.line - 1 } };
    },
  };
}
