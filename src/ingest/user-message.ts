/**
 * What a user message is to the agent: a **correction** (it says something the agent did, said or
 * assumed is wrong or unwanted), a **constraint** (a rule on how the agent must or must not work),
 * or **other** — a task request, a question, an acknowledgement, a pasted log or tool output, a
 * slash command, text a hook or the client injected. Only the first two become rules.
 *
 * The classifier reads linguistic cues, never phrases learnt from a sample: pushback at the start
 * or anywhere ({@link detectPushback}), negation with an imperative, "X not Y" / "instead",
 * normative words (always / never / must not / from now on), and where the message stands: right
 * after an agent action a pushback cue is a correction, while the first message of a session
 * cannot correct anything and counts only when it states a rule. A question is not a rule unless
 * it reproaches ("why did you …"); a pasted log is judged by the prose around it, if any.
 */
import { detectPushback, guessLanguage, type CorrectionLang } from './corrections.js';

export type UserMessageLabel = 'correction' | 'constraint' | 'other';

/** Why a message got its label (for explanations and tests). */
export type UserMessageReason =
  | 'not-user-words'
  | 'pasted'
  | 'question'
  | 'pushback'
  | 'concession'
  | 'rule'
  | 'plain';

/** Where a message stands in the conversation. */
export interface UserMessageContext {
  /**
   * What came right before it: an agent turn (reply or tool call), an interrupt of the agent, or
   * nothing yet in this session (the session's first request).
   */
  after: 'agent' | 'interrupt' | 'none';
  /** Turn flags from the reader (`slash-command`, `meta`, `sidechain` …). */
  flags?: readonly string[];
  /** The opening of the agent's next reply, when known ("You're right, …"). */
  reply?: string | null;
}

export interface UserMessageClass {
  label: UserMessageLabel;
  reason: UserMessageReason;
  /** The language the cue matched in, or the guessed language of the message. */
  lang: CorrectionLang | null;
  /** The words that decided it, when a cue did. */
  cue: string | null;
}

/** Reader flags that make a user-role turn something other than the user's own words. */
export const NOT_USER_WORDS: ReadonlySet<string> = new Set([
  'meta',
  'slash-command',
  'compact-summary',
  'interrupt',
  'bash',
  'command-output',
  'queued-meta',
  'sidechain',
]);

/**
 * Text that an agent, a hook or cairn itself put into the conversation: it is never read as the
 * user's words and never distilled (cairn must not re-ingest its own output).
 */
const INJECTED =
  /<system-reminder>|<\/?(?:command-name|command-message|command-args|local-command-stdout|user-prompt-submit-hook|task-notification)>|^Caveat: The messages below|^This session is being continued from a previous conversation|^# cairn memory|<!-- Exact findings kept across \/compact|^\[Request interrupted by user|additionalContext|^Base directory for this skill:/m;

export function isInjected(text: string): boolean {
  return INJECTED.test(text);
}

/**
 * A line that is program output or code rather than prose: a stack frame, a compiler or linter
 * diagnostic (`path:line:col`), a test runner's `E   ` / `>   ` line, a separator, an indented
 * code line, a key: value dump, or a line with more symbols than letters.
 */
function isMachineLine(line: string): boolean {
  const t = line.trim();
  if (t.length === 0) return false;
  if (/^(?:Traceback \(most recent call last\)|File "|at [\w.$<>]+ \(|\s*\^+\s*$|[-=_.⋮│|*#~]{4,})/.test(t)) return true;
  if (/^(?:[A-Z][\w.]*(?:Error|Exception|Warning)|error(?:\[\w+\])?|warning|fatal|panic|FAIL(?:ED)?|PASS(?:ED)?)\b[:\s]/.test(t)) return true;
  if (/^(?:E|>)\s{2,}\S/.test(line) || /^\s{4,}\S/.test(line) || /^\t/.test(line)) return true;
  if (/^[\w./\\~-]+\.\w+:\d+(?::\d+)?[:\s]/.test(t)) return true;
  if (/^[-\w]+:\s+\S/.test(t) && !/\s\w+\s\w+\s/.test(t.slice(t.indexOf(':')))) return true;
  if (/^(?:\$|>>>|\.\.\.|#\s*\w+\s*[:=])\s/.test(t)) return true;
  const letters = (t.match(/\p{L}/gu) ?? []).length;
  return letters < t.length * 0.5;
}

/**
 * The user's own prose in a message: fenced code, quoted lines and lines of program output
 * taken out. A message that is all output has none.
 */
export function proseOf(text: string): string {
  const out: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(?:```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced || /^\s*>/.test(line) || isMachineLine(line)) continue;
    out.push(line);
  }
  return out.join('\n').trim();
}

/** A slash command, a shell escape, or a bare URL / path / identifier: not words to the agent. */
const COMMAND_LIKE = /^(?:\/[\w:-]+(?:\s|$)|!\S)|^(?:[a-z][\w+.-]*:\/\/\S+|[\w~@-]*[./\\:#][\w./\\:#~@()-]*)$/iu;

/** Sentences of prose (split at . ! ? and line ends). */
function proseSentences(prose: string): string[] {
  return prose
    .split(/\n+|(?<=[.!?。！？])\s+/u)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

const INTERROGATIVE =
  /^(?:what|why|how|when|where|which|who|whom|whose|any idea|any way)\b|^(?:is|are|was|were|am|do|does|did|can|could|would|will|should|shall|may|might|have|has|had|isn't|aren't|doesn't|don't|didn't|won't|wouldn't|shouldn't|can't)\s+(?:i|you|we|they|it|this|that|these|those|there|he|she|the|my|your|our|its|any|all|some|a|an)\b|^(?:что|как|почему|зачем|где|когда|какой|какая|можно|можешь|есть ли|що|як|чому|навіщо|де|коли|який|чи|was|wie|warum|wo|wann|welche[rsn]?|kannst|gibt es|qu'est-ce|comment|pourquoi|où|quand|quel(?:le)?s?|est-ce|qué|cómo|por qué|dónde|cuándo|cuál|puedes|o que|como|por que|onde|quando|qual|pode)(?=$|[^\p{L}])/iu;

/** Whether a sentence asks rather than tells. */
export function isQuestion(sentence: string): boolean {
  const s = sentence.replace(/[\s*_`"')\]]+$/u, '');
  if (/[?？]$/u.test(s) || /[?？][!.]*$/u.test(s)) return true;
  return INTERROGATIVE.test(s) && !/[.!。！]$/u.test(s) && s.split(/\s+/).length <= 25;
}

/** Questions that reproach: they correct, although they ask. */
const REPROACH =
  /\bwhy (?:did|would|do|are|have) you\b|\bwho (?:told|asked) you\b|\bdid i (?:ask|tell) you\b|зачем ты|почему ты|навіщо ти|чому ти|warum hast du|pourquoi (?:as-tu|tu as)|por qué (?:lo )?hiciste|por que você|为什么你|なんで.*の[？?]/iu;

/**
 * Rules on how the agent works, in the languages the pushback patterns cover: never / always with
 * a verb, a negated imperative about the agent's own conduct, "must not", "make sure (not) to",
 * "from now on", "important: … not …".
 */
const RULE_CUES: RegExp[] = [
  new RegExp(
    String.raw`(?:^|[.!?;\n]\s*|,\s*|\b(?:you|we|please|and|but|should|must)\s+)(?:always|never)\s+(?:\w+\s+){0,2}?(?:use|run|touch|modify|change|edit|commit|push|add|create|delete|remove|write|call|ask|assume|mock|install|include|keep|put|make|do|check|test|format|import|rename)\b` +
      String.raw`|(?:^|[.!?;\n]\s*|,\s*|\b(?:but|and|please|just)\s+)(?:please\s+)?(?:don't|dont|do not|never)\s+(?:ever\s+)?(?:touch|modify|change|edit|commit|push|create|delete|remove|rewrite|refactor|rename|assume|produce|overcomplicate|add|use|mock|install|run|write|guess|invent|skip|ignore)\b` +
      String.raw`|\bi (?:prefer|'d rather|would rather|want you to always|want you to never)\b|\bplease (?:always|never)\b|\b(?:must not|mustn't|must never|should never|shouldn't ever)\b|\b(?:make sure|be sure) (?:not to|you don't|you never|to always)\b|\bfrom now on\b|\bgoing forward\b|\b(?:important|rule|note)\b[^.!?\n]{0,20}\bnot to\b|\bnot to (?:commit|push|touch|modify|change|edit|delete|create)\b`,
    'i',
  ),
  /(?:^|[\s,.;:!?])(?:я предпочитаю|предпочитаю|я віддаю перевагу|ich bevorzuge|bitte (?:immer|nie)|verwende immer|je préfère|utilise toujours|prefiero|usa siempre|prefiro|use sempre|никогда не|всегда используй|не трогай|не меняй|не коммить|не удаляй|не создавай|с этого момента|впредь|ніколи не|завжди використовуй|не чіпай|не змінюй|не видаляй|відтепер|niemals|immer (?:verwenden|nutzen)|fass[e]? \S+ nicht an|ab jetzt|ne (?:touche|modifie|supprime|crée) (?:jamais|pas)|toujours utiliser|désormais|nunca (?:uses|toques|cambies|borres)|no toques|a partir de ahora|nunca (?:use|mexa|altere|apague)|não mexa|a partir de agora)(?=$|[^\p{L}])/iu,
  /永远不要|绝对不要|不要(?:修改|删除|提交|改动|使用)|总是用|我更喜欢|以后都|从现在开始|絶対に|決して|常に|必ず|今後は|(?:変更|削除|コミット)しないで/u,
];

function ruleCue(prose: string): string | null {
  for (const re of RULE_CUES) {
    const m = re.exec(prose);
    if (m) return m[0].replace(/^[\s.!?;,:]+/u, '').trim();
  }
  return null;
}

/** The agent's next reply concedes it was wrong ("You're right, …", "My mistake"). */
const CONCESSION =
  /^(?:[*_#>\s]*)(?:ah[,!. ]+|oh[,!. ]+|brilliant[,!. ]+|good point[,!. ]+)?(?:you(?:'re| are) (?:absolutely |completely |totally |quite )?(?:right|correct)(?! to\b)|(?:absolutely|exactly) right|my (?:mistake|bad)|i apologi[sz]e for (?:the|my) (?:mistake|error|oversight)|(?:good|great|excellent|nice) catch|вы правы|ты прав|ви праві|ти правий|sie haben recht|du hast recht|vous avez raison|tu as raison|tienes razón|tiene razón|você tem razão|tem razão|你说得对|您说得对|你是对的|おっしゃる通り|その通りです)/iu;

/** Whether the agent's reply opens by conceding it was wrong. */
export function concedes(reply: string): boolean {
  return CONCESSION.test(reply);
}

const OTHER = (reason: UserMessageReason, lang: CorrectionLang | null = null): UserMessageClass => ({ label: 'other', reason, lang, cue: null });

/**
 * Classify one user message. Pure and cheap (no I/O); the patterns compile on first use.
 * @example classifyUserMessage("no, use the existing parser", { after: 'agent' }) // correction
 * @example classifyUserMessage("add a retry to the fetch call", { after: 'agent' }) // other
 * @example classifyUserMessage("never commit to main", { after: 'none' }) // constraint
 */
export function classifyUserMessage(text: string, context: UserMessageContext): UserMessageClass {
  return classify(text, context).verdict;
}

/** A message's class, and the class a reply that concedes would give it. */
export interface PendingClass {
  verdict: UserMessageClass;
  /**
   * What `classifyUserMessage(text, { ...context, reply })` gives when `concedes(reply)`, if that
   * is a correction the verdict was not; null when no reply can make it one.
   */
  ifConceded: UserMessageClass | null;
}

/**
 * {@link classifyUserMessage} without a reply, and what a conceding reply would make of the same
 * message: the correction finder classifies each user message once and, when the agent's reply
 * arrives, only tests the reply ({@link concedes}).
 */
export function classifyAwaitingReply(text: string, context: Omit<UserMessageContext, 'reply'>): PendingClass {
  return classify(text, context);
}

function classify(text: string, context: UserMessageContext): PendingClass {
  const other = (reason: UserMessageReason, lang: CorrectionLang | null = null): PendingClass => ({ verdict: OTHER(reason, lang), ifConceded: null });
  if (context.flags?.some((flag) => NOT_USER_WORDS.has(flag)) || isInjected(text)) return other('not-user-words');
  const trimmed = text.trim();
  if (trimmed.length === 0 || COMMAND_LIKE.test(trimmed)) return other('not-user-words');
  const prose = proseOf(trimmed);
  if (prose.length === 0) return other('pasted');
  const lang = guessLanguage(prose);
  const sentences = proseSentences(prose);
  const reproach = REPROACH.exec(prose);
  const statements = sentences.filter((s) => !isQuestion(s));
  if (statements.length === 0 && reproach === null) return other('question', lang);
  const told = statements.join('\n');
  const reactsToAgent = context.after !== 'none';

  let ifConceded: UserMessageClass | null = null;
  if (reactsToAgent) {
    if (reproach) return { verdict: { label: 'correction', reason: 'pushback', lang, cue: reproach[0] }, ifConceded: null };
    const pushback = detectPushback(told);
    if (pushback) return { verdict: { label: 'correction', reason: 'pushback', lang: pushback.lang, cue: pushback.cue }, ifConceded: null };
    // A concession confirms what the user stated; after a question it may only grant the question.
    if (statements.length === sentences.length) {
      ifConceded = { label: 'correction', reason: 'concession', lang, cue: null };
      if (context.reply && concedes(context.reply)) return { verdict: ifConceded, ifConceded: null };
    }
  }
  const rule = ruleCue(told);
  if (rule) return { verdict: { label: 'constraint', reason: 'rule', lang, cue: rule }, ifConceded };
  return { verdict: OTHER('plain', lang), ifConceded };
}

/** Whether a message corrects or constrains the agent (what may become a rule). */
export function isRuleMessage(result: UserMessageClass): boolean {
  return result.label !== 'other';
}
