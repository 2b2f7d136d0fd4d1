/**
 * A reader worker's warm-up: before its first file it reads a small made-up Claude Code session
 * through the whole pipeline (reader, builder, sanitizer, fact scanners, correction finder,
 * index terms, seal) and throws the result away.
 *
 * Why: V8 compiles a hot function for the branches it has seen run. A branch first met after
 * that — the first non-ASCII letter in the tokenizer, the first `Authorization:` header in the
 * secret scanner — throws the compiled code away and the function is compiled again; the hot
 * scanners went through that ten times and more in every worker over ../shared's transcripts
 * (the compiles and the slow code between them were a large part of a worker's CPU time). A few
 * lines that take those branches once, before anything is compiled, leave type feedback for them.
 * Nothing of it is stored or returned; it changes no output, only when V8 has seen what.
 */
import { turnIndexText } from '../store/substrate-rows.js';
import { BatchBuilder } from './builder.js';
import { createClaudeCodeParser } from './readers/claude-code.js';
import { sealReadBatch } from './seal.js';

const SESSION = '00000000-0000-4000-8000-00000000warm';
const PATH = '/warm-up/session.jsonl';

/** Prose, code and output with the shapes real sessions hold: Latin-1, CJK, emoji, camelCase, paths, URLs, settings. */
const USER_TEXTS = [
  'Fix the flaky test in src/lib/parseConfig.test.ts:42 — it fails on café, naïve and Straße (İstanbul too).',
  "No, don't use the old parser; use readConfig() from packages/core/src/config_loader.ts instead. Never commit to main.",
  '数据库连接失败了，请检查 config.yaml 🚀 ✅ «quote» “smart” … and run `npm test -- --grep "tokenizer"`',
  'Why did you delete HTTPServer.getURLForID? Put it back, please. See https://example.com/docs/v1.2.3-beta.4#api and issue #123.',
];

const ASSISTANT_TEXTS = [
  "You're right — I'll restore getURLForID in src/server/http_server.ts and re-run the tests with `pnpm vitest run`.",
  'The error comes from resolver.rs:214 (process_workspace_changes); XMLHttpRequest is not defined in Node 20.11.1.',
];

const OUTPUTS = [
  [
    '> my-app@0.3.1 test',
    '> vitest run',
    ' FAIL  test/parser.test.ts > tokenizer > keeps trailing underscores',
    "AssertionError: expected [ 'a' ] to deeply equal [ 'a_' ]",
    '    at /home/dev/my_app/test/parser.test.ts:17:23',
    'Error: Cannot find module "./config_loader.js" from src/index.ts',
    'npm ERR! code ELIFECYCLE',
    'error TS2322: Type \'string\' is not assignable to type \'number\'.',
    ' Test Files  1 failed | 3 passed (4)',
    'exit code 1',
  ].join('\n'),
  [
    '     1→import { readFileSync } from "node:fs";',
    '     2→export const WORD = /[a-z_]+/g;',
    '     3→export function parseConfig(path: string): Config {',
    '     4→  const text = readFileSync(path, "utf8"); // API_KEY=your-key-here',
    '     5→  return { url: "postgres://app:example-pw-1234@db.internal:5432/prod", password: "changeme" };',
    '     6→}',
    '     7→class ConfigLoader extends Base<string> {',
    '     8→  async load(): Promise<void> {}',
    '     9→}',
  ].join('\n'),
  [
    'src/lib/config_loader.ts:12:export function readConfig(dir: string) {',
    'src/server/http_server.ts:88:  getURLForID(id) { return `${this.base}/items/${id}`; }',
    'packages/core/README.md:3:Install with `npm i @acme/core@^2.4.0`',
    'Authorization: Bearer <token>   export TOKEN="${TOKEN}"   --password=$DB_PASSWORD   -u user:$PASS',
    '\u001b[31mred\u001b[0m  \\n\\"escaped\\": \\"json\\"  sk-demo ghp_demo xoxb-demo pypi-demo AIzaDemo eyJhbGci.eyJzdWIi.x',
    // Branches the lines above miss (each was a deopt and a recompile in every worker over
    // ../shared's transcripts): every line-number form a path may carry, a compound of more than
    // 16 parts (joined and snake_case), assignments whose value is escaped, ends in `.` or is a
    // padded high-entropy run, a type alias, and the AWS / Twilio anchors. The values are made up.
    '  File "src/app/settings.py", line 12, in load; src/lib/parse.ts(12,5): error; docs/guide.md#L12-L20; lib/util.c (line 7)',
    'a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t.ts a_b_c_d_e_f_g_h_i_j_k_l_m_n_o_p_q_r cache_blob=Zm9vYmFyQmF6cXV4MTIzNDU2Nzg5MGFi==, type SecretToken = Record<string, string>;  export DB_PASSWORD=hunter2hunter2x',
    'password=\\"s3cr3t-v4lue\\"  secret = abc123def456.  client_secret=QWxhZGRpbjpvcGVuIHNlc2FtZTEyMzQ1Njc4OTA==  AKIAABCDEFGHIJKLMNOP SK0123456789abcdef0123456789abcdef',
  ].join('\n'),
];

/** The made-up session, as JSONL lines. */
function sessionLines(): string[] {
  let seq = 0;
  const line = (record: Record<string, unknown>): string =>
    JSON.stringify({
      parentUuid: null,
      isSidechain: false,
      userType: 'external',
      cwd: '/home/dev/my_app',
      sessionId: SESSION,
      version: '2.1.9',
      gitBranch: 'main',
      uuid: `warm-${seq++}`,
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
      ...record,
    });
  const lines: string[] = [];
  for (let round = 0; round < 3; round++) {
    for (const [i, text] of USER_TEXTS.entries()) {
      lines.push(line({ type: 'user', message: { role: 'user', content: i % 2 === 0 ? text : [{ type: 'text', text }] } }));
      const id = `toolu_warm_${round}_${i}`;
      const tool = [
        { name: 'Bash', input: { command: 'cd packages/core && npm test -- --grep "parseConfig" 2>&1 | tail -20', description: 'run the tests' } },
        { name: 'Read', input: { file_path: '/home/dev/my_app/src/lib/config_loader.ts' } },
        { name: 'Grep', input: { pattern: 'getURLForID|readConfig', path: 'src', output_mode: 'content' } },
        { name: 'Edit', input: { file_path: 'src/server/http_server.ts', old_string: 'a', new_string: 'export const PORT = 8080;\nfunction getURLForID(id: string) {}' } },
      ][i % 4] as { name: string; input: unknown };
      const reply = ASSISTANT_TEXTS[i % ASSISTANT_TEXTS.length] as string;
      lines.push(line({ type: 'assistant', message: { id: `msg_warm_${round}_${i}`, role: 'assistant', content: [{ type: 'text', text: reply }, { type: 'tool_use', id, ...tool }] } }));
      const output = OUTPUTS[i % OUTPUTS.length] as string;
      lines.push(line({ type: 'user', message: { role: 'user', content: [{ tool_use_id: id, type: 'tool_result', content: output, is_error: i === 0 }] } }));
    }
  }
  return lines;
}

/**
 * Run the made-up session through the reader pipeline once (see the module doc). Never throws.
 * @returns what it read (turns, facts, redactions), for tests; zeros when it failed.
 */
export function warmUpReaders(): { turns: number; facts: number; redactions: number } {
  try {
    const builder = new BatchBuilder('claude-code', PATH, null);
    const parser = createClaudeCodeParser(builder, PATH, null);
    let offset = 0;
    for (const [i, text] of sessionLines().entries()) {
      builder.beginLine();
      parser.line(text, i + 1, offset);
      builder.endLine();
      offset += text.length + 1;
    }
    parser.end(true);
    const batch = builder.finish();
    for (const turn of batch.turns) turn.terms = turnIndexText(turn);
    sealReadBatch(batch);
    return { turns: batch.turns.length, facts: batch.facts.length, redactions: Object.values(builder.stats.redactions).reduce((a, b) => a + b, 0) };
  } catch {
    // A warm-up that fails has only failed to warm up: the worker reads files as it would anyway.
    return { turns: 0, facts: 0, redactions: 0 };
  }
}
