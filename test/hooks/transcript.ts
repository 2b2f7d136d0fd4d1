/** Builds a Claude Code transcript line by line, in the real on-disk format. */
export class TranscriptWriter {
  private n = 0;
  readonly lines: string[] = [];
  constructor(
    readonly sessionId: string,
    readonly cwd: string,
    private t = Date.UTC(2026, 2, 1, 9, 0, 0),
  ) {}

  private base(type: string): Record<string, unknown> {
    this.n++;
    this.t += 15_000;
    return {
      parentUuid: this.n > 1 ? `u-${this.n - 1}` : null,
      isSidechain: false,
      userType: 'external',
      cwd: this.cwd,
      sessionId: this.sessionId,
      version: '2.1.9',
      gitBranch: 'main',
      uuid: `u-${this.n}`,
      timestamp: new Date(this.t).toISOString(),
      type,
    };
  }

  private push(line: Record<string, unknown>): this {
    this.lines.push(JSON.stringify(line));
    return this;
  }

  user(text: string): this {
    return this.push({ ...this.base('user'), message: { role: 'user', content: text } });
  }

  assistant(text: string): this {
    const id = `msg_${this.n + 1}`;
    return this.push({
      ...this.base('assistant'),
      requestId: `req_${this.n + 1}`,
      message: { model: 'claude-sonnet-4-5', id, type: 'message', role: 'assistant', content: [{ type: 'text', text }], stop_reason: 'end_turn', usage: { input_tokens: 50, output_tokens: 40 } },
    });
  }

  /** A tool call and its result. */
  tool(name: string, input: Record<string, unknown>, result: string, isError = false): this {
    const toolId = `toolu_${this.n + 1}`;
    this.push({
      ...this.base('assistant'),
      requestId: `req_${this.n + 1}`,
      message: { model: 'claude-sonnet-4-5', id: `msg_${this.n + 1}`, type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: toolId, name, input }], stop_reason: 'tool_use', usage: { input_tokens: 50, output_tokens: 20 } },
    });
    return this.push({
      ...this.base('user'),
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolId, content: result, is_error: isError }] },
      toolUseResult: { stdout: result, stderr: '', interrupted: false },
    });
  }

  /** The compact boundary and the summary line Claude Code writes after /compact. */
  compact(summary: string, trigger: 'manual' | 'auto' = 'manual'): this {
    this.push({ ...this.base('system'), subtype: 'compact_boundary', content: 'Conversation compacted', level: 'info', compactMetadata: { trigger, preTokens: 123_456 } });
    return this.push({
      ...this.base('user'),
      isCompactSummary: true,
      isVisibleInTranscriptOnly: true,
      message: { role: 'user', content: `This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\n${summary}` },
    });
  }

  /** Let `ms` pass before the next line (a compaction takes seconds to minutes). */
  pause(ms: number): this {
    this.t += ms;
    return this;
  }

  text(): string {
    return `${this.lines.join('\n')}\n`;
  }
}
