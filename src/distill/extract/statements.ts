/**
 * Decisions ("we'll use…", "decided", "go with") and preferences ("I prefer", "always", "never",
 * "don't…") in the languages the correction finder supports. Preferences come from the user's
 * own words only; decisions also from the agent when it states one in so many words and names
 * something exact. A turn already kept as a correction is not read again here.
 */
import { classifyUserMessage, isQuestion } from '../../ingest/user-message.js';
import type { TurnRecord } from '../../types.js';
import type { SessionView } from '../session.js';
import { hasSpecific, oneLine, sentences, stripMarkdown } from '../text.js';
import type { Candidate, Subject } from '../types.js';
import { candidate } from './common.js';

const PREFERENCE_CUES: RegExp[] = [
  /\b(?:i (?:prefer|like to|want you to|'d rather|would rather|don't like|do not like|don't want|do not want)|always|never|(?:please )?(?:don't|do not|dont)|avoid|from now on|make sure (?:to|you)|stick (?:to|with)|instead of|rather than)\b/i,
  /(?:^|[\s,.;:!?])(?:я предпочитаю|предпочитаю|всегда|никогда|не используй|не делай|не надо|избегай|вместо|пожалуйста,? не|с этого момента|мне нравится)(?=$|[^\p{L}])/iu,
  /(?:^|[\s,.;:!?])(?:віддаю перевагу|завжди|ніколи|не використовуй|не роби|не треба|уникай|замість|будь ласка,? не|відтепер)(?=$|[^\p{L}])/iu,
  /(?:^|[\s,.;:!?])(?:ich bevorzuge|bevorzuge|immer|niemals|nie|bitte keine?|verwende keine?|vermeide|lieber|ab jetzt|statt)(?=$|[^\p{L}])/iu,
  /(?:^|[\s,.;:!?])(?:je préfère|toujours|jamais|n'utilise pas|ne fais pas|évite|plutôt que|au lieu de|désormais)(?=$|[^\p{L}])/iu,
  /(?:^|[\s,.;:!?])(?:prefiero|siempre|nunca|no uses|no hagas|evita|en lugar de|en vez de|a partir de ahora)(?=$|[^\p{L}])/iu,
  /(?:^|[\s,.;:!?])(?:prefiro|sempre|nunca|não use|não faça|evite|em vez de|a partir de agora)(?=$|[^\p{L}])/iu,
  /我喜欢|我更喜欢|总是|永远不要|不要|别用|请不要|以后都|一律/u,
  /好き|常に|いつも|絶対に|しないで|使わないで|ようにして|必ず/u,
];

const DECISION_CUES: RegExp[] = [
  /\b(?:let's (?:use|go with|stick with|switch to|keep|adopt)|we(?:'ll| will| should| are going to) (?:use|go with|stick with|switch to|keep|adopt)|(?:we |i )?decided (?:to|on|that)|decision:|go with|going with|we agreed|agreed (?:to|on)|settled on|chose to|we chose)\b/i,
  /(?:давай(?:те)? (?:использовать|используем|оставим)|будем использовать|решили|решено|остановимся на|выбрали)/iu,
  /(?:давай(?:те)? (?:використаємо|використовувати|залишимо)|будемо використовувати|вирішили|вирішено|зупинимось на|обрали)/iu,
  /(?:^|[\s,.;:!?])(?:lass uns|wir nehmen|wir verwenden|wir nutzen|entschieden|entscheidung:|wir bleiben bei)(?=$|[^\p{L}])/iu,
  /(?:^|[\s,.;:!?])(?:on va utiliser|utilisons|nous utiliserons|on part sur|décidé|décision\s*:|on garde)(?=$|[^\p{L}])/iu,
  /(?:^|[\s,.;:!?])(?:vamos a usar|usemos|usaremos|decidimos|decidido|decisión:|nos quedamos con)(?=$|[^\p{L}])/iu,
  /(?:^|[\s,.;:!?])(?:vamos usar|usaremos|decidimos|decidido|decisão:|ficamos com)(?=$|[^\p{L}])/iu,
  /我们用|决定|就用|改用|采用/u,
  /にしよう|を使おう|使うことにし|決めた|決定/u,
];

/** Agent phrasings of a decision strong enough to keep (not "I'll use the Read tool"). */
const AGENT_DECISION = /\b(?:decided (?:to|on|that)|decision:|we(?:'ll| will) (?:use|go with|stick with|switch to|keep)|going with|settled on|chose to|the (?:chosen|selected) approach is)\b/i;


export function hasPreferenceCue(sentence: string): boolean {
  return PREFERENCE_CUES.some((cue) => cue.test(sentence));
}

export function hasDecisionCue(sentence: string): boolean {
  return DECISION_CUES.some((cue) => cue.test(sentence));
}

/**
 * Alternatives a preference or decision picks among: a later pick in the same group conflicts.
 * A group counts only where its context is talked about (tabs are indentation only next to
 * "indent" or "spaces", not "browser tabs").
 */
const GROUPS: Array<[string, string[], RegExp | null]> = [
  ['package-manager', ['npm', 'pnpm', 'yarn', 'bun'], null],
  ['indentation', ['tabs', 'spaces'], /\bindent|\btabs?\b.{0,30}\bspaces?\b|\bspaces?\b.{0,30}\btabs?\b|\b\d+ spaces\b/i],
  ['quotes', ['single quotes', 'double quotes'], null],
  ['test-runner', ['jest', 'vitest', 'mocha', 'pytest', 'unittest', 'ava'], null],
  ['python-env', ['pip', 'poetry', 'uv', 'pipenv', 'conda'], null],
  ['formatter', ['prettier', 'biome', 'black', 'dprint'], /\bformat/i],
  ['database', ['sqlite', 'postgres', 'postgresql', 'mysql', 'mongodb'], null],
  ['bundler', ['webpack', 'vite', 'esbuild', 'rollup', 'parcel', 'tsup'], null],
];

/** A sentence that picks something ("use X", "prefer X", "X instead of Y", "switch to X"). */
const CHOICE =
  /\b(?:use|using|prefer|instead|rather|switch(?:ed)? to|go with|stick (?:to|with)|always|never|don't use|do not use|migrate to|move to)\b|используй|использовать|используем|вместо|перейд|використовуй|використовувати|замість|verwende|nutze|statt|lieber|utilise|au lieu|usa\b|usar|en vez|en lugar|use\b|em vez|用|改用|使う|使って/iu;

const NEGATED_BEFORE = /(?:instead of|rather than|not|no|don't use|do not use|never use|never|avoid|without|вместо|замість|statt|au lieu de|en lugar de|en vez de|em vez de)\s+(?:\S+\s+){0,2}$/i;

/**
 * The choice a sentence makes among known alternatives (`use pnpm instead of npm` → package
 * manager = pnpm), when it is about choosing and exactly one alternative is picked positively.
 */
export function preferenceSubject(text: string): Omit<Subject, 'onConflict'> | null {
  if (!CHOICE.test(text)) return null;
  // Commands in code spans (`npm run build`) mention a tool; they do not pick it.
  const lower = text.replace(/`[^`]*\s[^`]*`/g, ' ').toLowerCase();
  for (const [group, members, context] of GROUPS) {
    if (context !== null && !context.test(lower)) continue;
    const picked = new Set<string>();
    for (const member of members) {
      const re = new RegExp(`(?<![\\w/.-])${member.replace(/ /g, '\\s+')}(?![\\w/-])(?!\\s+(?:run|install|i|ci|test|exec|add|build|start|publish|x)\\b)`, 'g');
      for (const m of lower.matchAll(re)) {
        if (!NEGATED_BEFORE.test(lower.slice(Math.max(0, m.index - 40), m.index))) picked.add(member === 'postgresql' ? 'postgres' : member);
      }
    }
    if (picked.size === 1) return { key: `pref:${group}`, value: [...picked][0] as string };
  }
  return null;
}

/** How many statements one turn may yield (a long spec is not a list of preferences). */
const MAX_PER_TURN = 3;

function statementText(sentence: string): string {
  return oneLine(stripMarkdown(sentence), 300);
}

export function extractStatements(view: SessionView): Candidate[] {
  const out: Candidate[] = [];
  const correctionTurns = new Set(view.corrections.map((c) => c.correctionTurnId));
  for (const turn of view.turns) {
    if (!view.isNew(turn)) continue;
    if (view.isHumanTurn(turn) && !correctionTurns.has(turn.id)) out.push(...fromUser(view, turn));
    else if (view.isAgentText(turn)) out.push(...fromAgent(view, turn));
  }
  return out;
}

/**
 * Sentences of a user message: typed messages are often all lower case, so a sentence also ends
 * at `. ` / `! ` before a lower-case word ("great, plan it. important not to commit …").
 */
function userSentences(text: string): string[] {
  return sentences(text).flatMap((sentence) => sentence.split(/(?<=[a-z)][.!])\s+(?=[a-z])/u));
}

function fromUser(view: SessionView, turn: TurnRecord): Candidate[] {
  const out: Candidate[] = [];
  // A preference is a rule: only from a message that constrains the agent (not a task request
  // that mentions "always", not a question, not a pasted log).
  const verdict = classifyUserMessage(turn.text, view.messageContext(turn));
  if (verdict.reason === 'not-user-words' || verdict.reason === 'pasted' || verdict.reason === 'question') return out;
  const constrains = verdict.label !== 'other';
  for (const sentence of userSentences(turn.text)) {
    if (out.length >= MAX_PER_TURN) break;
    if (sentence.length < 12 || sentence.length > 280 || isQuestion(sentence)) continue;
    const decision = hasDecisionCue(sentence);
    const preference = !decision && constrains && (hasPreferenceCue(sentence) || (verdict.cue !== null && sentence.toLowerCase().includes(verdict.cue.toLowerCase())));
    if (!decision && !preference) continue;
    const subject = preferenceSubject(sentence);
    out.push(
      candidate(view, turn, {
        text: statementText(sentence),
        kind: decision ? 'decision' : 'preference',
        extractor: decision ? 'decision' : 'preference',
        importance: decision ? 0.7 : 0.75,
        tags: [decision ? 'decision' : 'preference'],
        subject: subject ? { ...subject, onConflict: decision ? 'review' : 'supersede' } : null,
      }),
    );
  }
  return out;
}

function fromAgent(view: SessionView, turn: TurnRecord): Candidate[] {
  const out: Candidate[] = [];
  for (const sentence of sentences(turn.text)) {
    if (out.length >= 2) break;
    if (!AGENT_DECISION.test(sentence) || isQuestion(sentence) || !hasSpecific(sentence)) continue;
    const subject = preferenceSubject(sentence);
    out.push(
      candidate(view, turn, {
        text: statementText(sentence),
        kind: 'decision',
        extractor: 'decision',
        importance: 0.6,
        tags: ['decision'],
        subject: subject ? { ...subject, onConflict: 'review' } : null,
      }),
    );
  }
  return out;
}
