/** Self-written sessions for distillation tests: turns built in the substrate's own shape. */
import { createCairn, type Cairn } from '../../src/cairn.js';
import { SessionView } from '../../src/distill/session.js';
import { findCorrections } from '../../src/ingest/correction-finder.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Clock, CorrectionRecord, Embedder, SessionRecord, TurnRecord } from '../../src/types.js';

export const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
export const DAY = 86_400_000;

export class FakeClock implements Clock {
  constructor(public t = T0 + 30 * DAY) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

export function sessionRecord(id = 'sess-1', overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    agent: 'claude-code',
    project: 'github.com/acme/app',
    cwd: '/home/dev/app',
    branch: 'main',
    parentId: null,
    startedAt: T0,
    endedAt: null,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    compactions: 0,
    sourcePath: `/home/dev/.claude/projects/app/${id}.jsonl`,
    title: null,
    ...overrides,
  };
}

/** Builds the turns of one session, a line per turn, a minute apart. */
export class Turns {
  readonly turns: TurnRecord[] = [];
  private tools = 0;
  constructor(readonly session: SessionRecord = sessionRecord(), private startAt = T0) {}

  private push(turn: Omit<TurnRecord, 'id' | 'sessionId' | 'seq' | 'at' | 'sourceUuid' | 'sourceLine'>): TurnRecord {
    const seq = this.turns.length;
    const record: TurnRecord = {
      id: `${this.session.id}:u${seq}`,
      sessionId: this.session.id,
      seq,
      at: this.startAt + seq * 60_000,
      sourceUuid: `u${seq}`,
      sourceLine: seq + 1,
      ...turn,
    };
    this.turns.push(record);
    return record;
  }

  user(text: string, flags: string[] = []): this {
    this.push({ role: 'user', text, toolName: null, toolInput: null, toolUseId: null, isError: false, flags });
    return this;
  }

  assistant(text: string, flags: string[] = []): this {
    this.push({ role: 'assistant', text, toolName: null, toolInput: null, toolUseId: null, isError: false, flags });
    return this;
  }

  /** A tool call and its result. */
  tool(name: string, input: Record<string, unknown> | string, output: string, options: { isError?: boolean; flags?: string[] } = {}): this {
    const id = `toolu_${++this.tools}`;
    const json = typeof input === 'string' ? input : JSON.stringify(input);
    const primary = typeof input === 'string' ? input : String(input.command ?? input.file_path ?? input.pattern ?? json);
    this.push({ role: 'tool_call', text: `${name}: ${primary}`, toolName: name, toolInput: json, toolUseId: id, isError: false, flags: [] });
    this.push({ role: 'tool_result', text: output, toolName: name, toolInput: output, toolUseId: id, isError: options.isError ?? false, flags: options.flags ?? [] });
    return this;
  }

  /** Correction pairs as the ingest correction finder records them. */
  corrections(): CorrectionRecord[] {
    return findCorrections(this.turns, { lastAgent: new Map(), pending: new Map() });
  }

  /** Every turn new (fromSeq 0), or only those from `fromSeq`. */
  view(fromSeq = 0): SessionView {
    return new SessionView(this.session, this.turns, fromSeq, this.corrections());
  }
}

export interface TestCairn {
  cairn: Cairn;
  clock: FakeClock;
  /** Write a session's turns (and corrections) into the substrate, as ingest would. */
  write(turns: Turns): Promise<void>;
}

export async function testCairn(options: { embedder?: Embedder; project?: string | null; workspaceRoot?: string | null } = {}): Promise<TestCairn> {
  const clock = new FakeClock();
  const store = await openSqliteStore(':memory:');
  const cairn = createCairn({
    store,
    clock,
    actor: 'test',
    project: options.project === undefined ? 'github.com/acme/app' : options.project,
    workspaceRoot: options.workspaceRoot ?? null,
    ...(options.embedder ? { embedder: options.embedder } : {}),
  });
  return {
    cairn,
    clock,
    async write(turns: Turns) {
      await store.substrate.writeSubstrate({ sessions: [turns.session], turns: turns.turns, compactions: [], corrections: turns.corrections(), cursor: null });
    },
  };
}
