/**
 * "Corrections mean corrections" (#15 item 4): a user message becomes a rule only when it corrects
 * or constrains the agent. Measured on a hand-labelled sample of real user messages drawn from
 * ../shared/data/transcripts (test/fixtures/corrections/, see its README): tuned on the `tune` part
 * only, held to precision ≥ 0.9 at recall ≥ 0.8 on the `report` part. The fixture lives in the
 * repository, so this runs on a fresh clone without ../shared.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyUserMessage, type UserMessageContext } from '../../src/ingest/user-message.js';

interface Labelled {
  id: string;
  part: 'tune' | 'report';
  label: 'correction' | 'constraint' | 'other';
  kind: string;
  after: UserMessageContext['after'];
  flags: string[];
  text: string;
  reply: string;
  source: string;
}

const FIXTURE = resolve(import.meta.dirname, '../fixtures/corrections/user-messages.jsonl');
const sample: Labelled[] = readFileSync(FIXTURE, 'utf8')
  .split('\n')
  .filter((line) => line.trim().length > 0)
  .map((line) => JSON.parse(line) as Labelled);

interface Figures {
  messages: number;
  positives: number;
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
}

/** Binary figures: "corrects or constrains the agent" (correction ∪ constraint) against the rest. */
function measure(part: Labelled['part']): Figures {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let messages = 0;
  for (const row of sample) {
    if (row.part !== part) continue;
    messages++;
    const predicted = classifyUserMessage(row.text, { after: row.after, flags: row.flags, reply: row.reply }).label !== 'other';
    const gold = row.label !== 'other';
    if (predicted && gold) tp++;
    else if (predicted) fp++;
    else if (gold) fn++;
  }
  return { messages, positives: tp + fn, tp, fp, fn, precision: tp / Math.max(1, tp + fp), recall: tp / Math.max(1, tp + fn) };
}

describe('the labelled sample (test/fixtures/corrections)', () => {
  it('is well formed: unique ids, known labels, both parts with enough positives', () => {
    expect(sample.length).toBeGreaterThanOrEqual(600);
    expect(new Set(sample.map((r) => r.id)).size).toBe(sample.length);
    for (const row of sample) {
      expect(['tune', 'report']).toContain(row.part);
      expect(['correction', 'constraint', 'other']).toContain(row.label);
      expect(['agent', 'interrupt', 'none']).toContain(row.after);
      expect(row.text.length).toBeLessThanOrEqual(700);
    }
    for (const part of ['tune', 'report'] as const) {
      const rows = sample.filter((r) => r.part === part);
      expect(rows.length).toBeGreaterThan(250);
      expect(rows.filter((r) => r.label !== 'other').length).toBeGreaterThanOrEqual(25);
    }
  });

  it('reaches precision ≥ 0.9 at recall ≥ 0.8 on the report part (and holds on the tuning part)', () => {
    const report = measure('report');
    const tune = measure('tune');
    console.info(`corrections classifier — tune: ${JSON.stringify(tune)}; report: ${JSON.stringify(report)}`);
    expect(report.precision).toBeGreaterThanOrEqual(0.9);
    expect(report.recall).toBeGreaterThanOrEqual(0.8);
    expect(tune.precision).toBeGreaterThanOrEqual(0.9);
    expect(tune.recall).toBeGreaterThanOrEqual(0.8);
  });

  it('never takes a question, a log, a command or injected text for a correction', () => {
    const wrong = sample.filter(
      (r) => ['question', 'log', 'command', 'injected', 'acknowledgement'].includes(r.kind) && classifyUserMessage(r.text, { after: r.after, flags: r.flags, reply: r.reply }).label !== 'other',
    );
    expect(wrong.map((r) => `${r.id}: ${r.text.slice(0, 80)}`)).toEqual([]);
  });
});

/** Hand-written cases in every language the patterns cover (the sample above is nearly all English). */
const CASES: Array<[string, UserMessageContext['after'], 'correction' | 'constraint' | 'other']> = [
  ['no, use the existing parser', 'agent', 'correction'],
  ["don't touch the migrations", 'agent', 'correction'],
  ['use pnpm, not npm', 'agent', 'correction'],
  ['return the error instead', 'agent', 'correction'],
  ['why did you delete the tests?', 'agent', 'correction'],
  ['never commit to main; open a pull request', 'none', 'constraint'],
  ['Fix the login bug. Do not modify the database schema.', 'none', 'constraint'],
  ['from now on, run the linter before every commit', 'agent', 'constraint'],
  ['add a retry to the fetch call', 'agent', 'other'],
  ['use the Spinner instead of the inlined spinner', 'none', 'other'],
  ['will that work on windows?', 'agent', 'other'],
  ['thanks, looks good', 'agent', 'other'],
  ['TypeError: confirm() got an unexpected keyword argument "default"', 'agent', 'other'],
  ['Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n    main()\nValueError: bad', 'agent', 'other'],
  ['/compact keep the migration notes', 'agent', 'other'],
  ['нет, используй существующий парсер', 'agent', 'correction'],
  ['никогда не коммить в main', 'none', 'constraint'],
  ['добавь повтор запроса', 'agent', 'other'],
  ['ні, використай існуючий парсер', 'agent', 'correction'],
  ['nein, nimm den vorhandenen Parser', 'agent', 'correction'],
  ['füge einen Retry hinzu', 'agent', 'other'],
  ["non, utilise le parseur existant", 'agent', 'correction'],
  ['ajoute une relance à la requête', 'agent', 'other'],
  ['no, usa el parser existente', 'agent', 'correction'],
  ['añade un reintento a la petición', 'agent', 'other'],
  ['não, use o parser existente', 'agent', 'correction'],
  ['不对，用现有的解析器', 'agent', 'correction'],
  ['永远不要修改迁移文件', 'none', 'constraint'],
  ['给请求加上重试', 'agent', 'other'],
  ['違う、既存のパーサーを使って', 'agent', 'correction'],
  ['リクエストにリトライを追加して', 'agent', 'other'],
];

describe('classifyUserMessage', () => {
  it.each(CASES)('%s (after %s) → %s', (text, after, label) => {
    expect(classifyUserMessage(text, { after }).label).toBe(label);
  });

  it('a first message cannot correct: pushback wording there is at most a constraint', () => {
    expect(classifyUserMessage('no, use the existing parser', { after: 'none' }).label).toBe('other');
    expect(classifyUserMessage("don't touch the migrations", { after: 'none' }).label).toBe('constraint');
  });

  it("counts the agent's concession only after a statement, not after a question", () => {
    const reply = "You're absolutely right, I conflated the two processes.";
    expect(classifyUserMessage("we don't control that process, it's a third-party tool", { after: 'agent', reply })).toMatchObject({ label: 'correction', reason: 'concession' });
    expect(classifyUserMessage('will this work on windows?', { after: 'agent', reply: "You're right to be concerned about Windows." }).label).toBe('other');
    expect(classifyUserMessage('it should consider the files at that tag, right?', { after: 'agent', reply })).toMatchObject({ label: 'other', reason: 'question' });
  });

  it('reads the prose around a pasted log', () => {
    expect(classifyUserMessage('That broke everything. All releases show 0 lines:\n\n- total_lines: 0\n  end_tag: v0.47.0', { after: 'agent' }).label).toBe('correction');
    expect(classifyUserMessage('aider/coders/base_coder.py:1245:9: F841 local variable is assigned to but never used', { after: 'agent' }).label).toBe('other');
  });

  it('skips turns that are not the user’s own words', () => {
    expect(classifyUserMessage('no, wrong file', { after: 'agent', flags: ['sidechain'] })).toMatchObject({ label: 'other', reason: 'not-user-words' });
    expect(classifyUserMessage('<system-reminder>never do X</system-reminder>', { after: 'agent' }).label).toBe('other');
  });
});
