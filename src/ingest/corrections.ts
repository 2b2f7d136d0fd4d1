/**
 * Correction pairs: the agent turn a user pushed back on, and the user's correction. Found from
 * interrupts, tool rejections and explicit pushback ("no, …", "that's wrong", "don't …",
 * "I said …", "actually, …", "not X but Y") in English, Russian, Ukrainian, German, French,
 * Spanish, Portuguese, Chinese and Japanese.
 *
 * The patterns look at how a message starts and at a few unmistakable phrases anywhere, and skip
 * polite formulas ("no problem", "don't worry"). Whether a message counts is decided by
 * {@link classifyUserMessage} (./user-message.ts), which runs these patterns on the user's prose
 * only (not on questions, pasted logs or commands) and only after an agent turn: a first prompt
 * full of "don't"s is an instruction, not a correction. The finder over a run of turns is
 * ./correction-finder.ts.
 */

/** A language a pushback pattern is written in (ISO 639-1). */
export const CORRECTION_LANGS = ['en', 'ru', 'uk', 'de', 'fr', 'es', 'pt', 'zh', 'ja'] as const;
export type CorrectionLang = (typeof CORRECTION_LANGS)[number];

export interface PushbackMatch {
  lang: CorrectionLang;
  /** The text that matched, for explanations. */
  cue: string;
}

interface LangRules {
  lang: CorrectionLang;
  /** Polite formulas at the start that look like pushback but are not. */
  exclude: RegExp;
  /** Cues at the start of the message. */
  start: RegExp;
  /** Cues anywhere (tested on the first 2,000 characters). */
  anywhere: RegExp;
}

/** End of a word for scripts `\b` does not understand (Cyrillic, accented Latin). */
const E = String.raw`(?=$|[^\p{L}\p{N}_'])`;
/**
 * "Use X, not Y": a contrast whose "not" negates a thing, not a verb (no auxiliary before it), at
 * the end of a sentence.
 */
const CONTRAST = String.raw`(?<!\b(?:is|are|was|were|am|be|been|do|does|did|should|can|could|will|would|have|has|had|must|may|might|need|needs|why|if|or|whether|and|i|we|it|they|that|this|there|just|still|also|may|could|probably|definitely|really))\s+not\s+(?:the\s+|a\s+|an\s+)?[\w./:'"-]+\s*(?:[.!;]|$)`;
/** Start of a sentence inside the message. */
const S = String.raw`(?:^|[.!?;:\n]\s*|,\s+)`;

function rx(source: string): RegExp {
  return new RegExp(source, 'u');
}

/** Built on first use: compiling these Unicode patterns costs ~10 ms, which a prompt hook never needs. */
let rulesCache: Record<CorrectionLang, LangRules> | null = null;
const RULES = (): Record<CorrectionLang, LangRules> => (rulesCache ??= {
  en: {
    lang: 'en',
    exclude: rx(
      String.raw`^(?:no (?:problem|prob|worries|rush|doubt|offense|biggie)|no need to (?:worry|apologi[sz]e|hurry|thank)|no,? (?:thanks|thank you)|not (?:bad|sure|yet|only|really|much)|don't (?:worry|hesitate|mind)|stop(?:words?|-?loss|watch)${E})`,
    ),
    start: rx(
      String.raw`^(?:no\s*[,.!;:—–-]|no$|no (?:i|you|we|it|that|this|don't|do not|use|it's|that's|not|wait|stop|just|please|dont)${E}|nope${E}|nah${E}|wrong${E}|incorrect${E}|not quite${E}|not like that|not that${E}|stop(?:\s*[.!,]|$| (?:it|that|this|doing|changing|adding|using|making|writing|editing|touching|there|right there)${E})|wait\s*[,.!]|hold on${E}|undo${E}|revert${E}|actually${E}|never ?mind${E}|(?:there(?:'s| is) )?no need (?:to|for)${E}|not [^.!?\n]{1,60}(?:[,;]\s|\bbut\b)|(?:that|this|it)(?:'s| is| was) (?:wrong|incorrect|broken|not (?:right|correct|what|it|how|true|valid))${E}|(?:it|that|this)(?:'s| is) (?:a )?bad idea|again\s*[,:!]|(?:ok(?:ay)?|great|good|nice|fine|thanks|cool|sure|looks good|(?:it|that|this)(?:'s| is) (?:good|fine|ok))[,!.]?\s+but${E})`,
    ),
    anywhere: rx(
      String.raw`(?:\b(?:that|this|it)(?:'s| is| was) (?:wrong|incorrect|not (?:right|correct|what i|how i|true|valid|acceptable))\b|\bi (?:said|told you|already told you|asked (?:you )?(?:to|for|not)|meant)\b|\bnot what i (?:asked|said|meant|wanted)\b|\bwhy (?:did|would) you\b|\byou (?:broke|deleted|removed|ignored|forgot|missed|didn't|did not|shouldn't|should not)\b|${S}(?:please\s+)?(?:don't|dont|do not|never)\s+(?!worry|hesitate|mind|forget to)\w|(?:it|that|this)(?:'s| is) (?:a )?bad idea\b|\b(?:is|are|was) not accept?able\b|\bunacceptable\b|${S}\w{1,3}'s not [^.!?\n]{1,80}[.,;]\s*(?:it's|it is|this is|that's|use|should)\b|\b(?:but|however)\b[^.!?\n]{0,80}\b(?:must not|mustn't|should not|shouldn't)\b|\binstead\b(?!\s+of)|\w[^.!?\n]*\binstead of\b|\bi (?:don't|do not|didn't|did not) (?:want|ask|need)\b|\bi (?:just|only) want(?:ed)?\b|\b(?:nonsense|pointless|overkill|unnecessary|overcomplicated|too (?:complicated|complex))\b|${CONTRAST}|\b(?:that|this|it|you) broke\b|\bstill (?:doesn't|does not|not|fails|failing|broken|wrong|the same|shows|0)\b|\b(?:doesn't|does not|didn't|did not) work\b|\bnot working\b|${S}(?:revert|undo|roll back|redo) (?:it|that|this|the)\b)`,
    ),
  },
  ru: {
    lang: 'ru',
    exclude: rx(
      String.raw`^(?:нет проблем|не за что|не волнуй(?:ся|тесь)|не беспокой(?:ся|тесь)|нет,? спасибо|ничего страшного)${E}`,
    ),
    start: rx(
      String.raw`^(?:нет|не так|не то|неправильно|неверно|не надо|не нужно|не делай(?:те)?|стоп|хватит|подожди(?:те)?|погоди|отмени(?:те)?|откати(?:те)?|вообще-то|на самом деле|ошибка|ты ошиб(?:ся|аешься))${E}`,
    ),
    anywhere: rx(
      String.raw`(?:(?:я же|я) (?:сказал|говорил|просил)[аи]?${E}|это (?:неправильно|неверно|не то)${E}|зачем ты${E}|ты (?:сломал|удалил|забыл|проигнорировал)${E}|${S}не (?:надо|нужно|делай(?:те)?|трогай(?:те)?|меняй(?:те)?)${E}|${S}не [^.!?\n]{1,60}, а )`,
    ),
  },
  uk: {
    lang: 'uk',
    exclude: rx(
      String.raw`^(?:немає проблем|нема проблем|не хвилюй(?:ся|теся)|не турбуй(?:ся|теся)|ні,? дякую|будь ласка)${E}`,
    ),
    start: rx(
      String.raw`^(?:ні|не так|не те|неправильно|невірно|не треба|не потрібно|не роби(?:ть)?|стоп|зупинись|годі|зачекай(?:те)?|відміни(?:ть)?|насправді|взагалі-то)${E}`,
    ),
    anywhere: rx(
      String.raw`(?:(?:я ж|я) (?:казав|сказав|просив|казала|сказала|просила)${E}|це (?:неправильно|невірно|не те)${E}|навіщо ти${E}|ти (?:зламав|видалив|забув)${E}|${S}не (?:треба|потрібно|роби(?:ть)?|чіпай(?:те)?|змінюй(?:те)?)${E}|${S}не [^.!?\n]{1,60}, а )`,
    ),
  },
  de: {
    lang: 'de',
    exclude: rx(String.raw`^(?:kein problem|keine sorge|keine ursache|nein,? danke|macht nichts|nicht schlimm)${E}`),
    start: rx(
      String.raw`^(?:nein|falsch|stopp?|halt|moment|warte|eigentlich|nicht so|das ist falsch|das stimmt nicht|mach das nicht|bitte nicht)${E}`,
    ),
    anywhere: rx(
      String.raw`(?:ich (?:habe?|hatte) (?:doch |dir |es )*(?:gesagt|gebeten)${E}|ich sagte${E}|das ist (?:falsch|nicht richtig|nicht korrekt|nicht das)${E}|das stimmt nicht${E}|warum hast du${E}|du hast (?:\p{L}+ )?(?:gelöscht|kaputt gemacht|vergessen|ignoriert)${E}|${S}nicht [^.!?\n]{1,60},? sondern${E}|${S}(?:bitte )?(?:mach|ändere|lösche) (?:das|es|die|den) nicht${E})`,
    ),
  },
  fr: {
    lang: 'fr',
    exclude: rx(
      String.raw`^(?:pas de (?:problème|souci|soucis)|ne t'inquiète pas|ne vous inquiétez pas|non,? merci|de rien|aucun problème)${E}`,
    ),
    start: rx(
      String.raw`^(?:non|arrête|arrêtez|stop|attends|attendez|en fait|c'est faux|c'est pas ça|ce n'est pas (?:ça|ce que)|pas comme ça|pas ça|ne fais pas|ne faites pas|annule)${E}`,
    ),
    anywhere: rx(
      String.raw`(?:j'ai dit${E}|je (?:t'|vous )ai (?:dit|demandé)${E}|c'est faux${E}|ce n'est pas (?:correct|juste|ce que)${E}|c'est pas (?:correct|ça)${E}|pourquoi (?:as-tu|tu as|avez-vous)${E}|tu as (?:supprimé|cassé|oublié)${E}|${S}ne (?:fais|faites|touche|touchez|modifie|modifiez) pas${E}|${S}pas [^.!?\n]{1,60},? mais${E})`,
    ),
  },
  es: {
    lang: 'es',
    exclude: rx(
      String.raw`^(?:no hay problema|no te preocupes|no se preocupe|no pasa nada|de nada|no,? gracias|sin problema)${E}`,
    ),
    start: rx(
      String.raw`^(?:no\s*[,.!;:]|no (?:es|lo|uses|hagas|así|eso|toques|cambies)${E}|para\s*[.!,]|detente${E}|basta${E}|espera\s*[,.!]|en realidad${E}|eso (?:está mal|no es)${E}|está mal${E}|incorrecto${E})`,
    ),
    anywhere: rx(
      String.raw`(?:(?:ya )?te dije${E}|dije que${E}|te pedí${E}|eso (?:está mal|es incorrecto|no es lo que)${E}|por qué (?:lo )?hiciste${E}|${S}no (?:hagas|uses|toques|cambies|borres)${E}|${S}no [^.!?\n]{1,60},? sino${E})`,
    ),
  },
  pt: {
    lang: 'pt',
    exclude: rx(
      String.raw`^(?:sem problema|não tem problema|não há problema|não se preocupe|não esquenta|de nada|não,? obrigad[oa])${E}`,
    ),
    start: rx(
      String.raw`^(?:não|pare|para com isso|espera|espere|na verdade|errado|está errado|isso está errado|não faça|não faz)${E}`,
    ),
    anywhere: rx(
      String.raw`(?:eu (?:te )?disse${E}|eu falei${E}|te pedi${E}|isso (?:está|tá) errado${E}|não é (?:isso|o que)${E}|por que você${E}|você (?:apagou|quebrou|esqueceu)${E}|${S}não (?:faça|use|mexa|altere|apague)${E}|${S}não [^.!?\n]{1,60},? mas${E})`,
    ),
  },
  zh: {
    lang: 'zh',
    exclude: rx(String.raw`^(?:没问题|没关系|不客气|不用谢|别担心|不用担心|不要担心|不错|不好意思)`),
    start: rx(String.raw`^(?:不对|不是|错了|不要|别|停|等等|等一下|其实|不行|撤销|回滚)`),
    anywhere: rx(
      String.raw`(?:我说过|我说的是|我已经说|我让你|不是[^。！？\n]{1,40}而是|你(?:删|弄坏|忘)了|为什么你|这是错的|这不对|搞错了)`,
    ),
  },
  ja: {
    lang: 'ja',
    exclude: rx(
      String.raw`^(?:問題ない|問題ありません|大丈夫|気にしないで|心配しないで|どういたしまして|いいえ、?どういたしまして)`,
    ),
    start: rx(String.raw`^(?:違う|ちがう|違います|いいえ|いや、|そうじゃない|そうではなく|やめて|止めて|ストップ|待って|実は|元に戻して)`),
    anywhere: rx(
      String.raw`(?:言ったでしょ|って言った|と言った|と言いました|じゃなくて|ではなく|間違って|(?<!心配|気に)しないで)`,
    ),
  },
});

const LATIN_HINTS: Array<[CorrectionLang, Set<string>]> = [
  ['en', new Set(['the', 'is', 'it', 'that', 'this', 'you', 'to', 'and', 'of', 'not', "don't", 'use', 'with', 'please', 'i', 'it\'s', 'what', 'should'])],
  ['es', new Set(['el', 'la', 'los', 'las', 'que', 'es', 'usa', 'por', 'con', 'eso', 'esto', 'una', 'lo', 'del', 'pero', 'sino', 'está', 'hagas', 'dije'])],
  ['pt', new Set(['o', 'os', 'que', 'é', 'não', 'você', 'isso', 'isto', 'um', 'uma', 'com', 'mas', 'está', 'do', 'da', 'faça', 'disse'])],
  ['de', new Set(['der', 'die', 'das', 'ist', 'nicht', 'und', 'du', 'ich', 'ein', 'eine', 'mit', 'bitte', 'sondern', 'zu', 'nein', 'habe'])],
  ['fr', new Set(['le', 'les', 'est', 'pas', 'et', 'tu', 'je', 'un', 'une', 'ce', "c'est", 'ça', 'mais', 'avec', 'vous', 'non', 'fais'])],
];

const CYRILLIC_HINTS: Array<[CorrectionLang, Set<string>]> = [
  ['uk', new Set(['це', 'що', 'та', 'цей', 'ця', 'який', 'ні', 'треба', 'будь', 'його', 'або', 'тому', 'той', 'ти'])],
  ['ru', new Set(['это', 'что', 'этот', 'эта', 'как', 'нет', 'надо', 'нужно', 'тот', 'его', 'или', 'поэтому', 'ты'])],
];
/** French elisions (j'ai, d'utiliser, l'en-tête, qu'il …). */
const FRENCH_ELISION = /^(?:j|d|l|n|qu|s|m|t|c)'\p{L}/u;

const KANA = /[\u3040-\u30ff]/u;
const HAN = /[\u4e00-\u9fff]/u;
const CYRILLIC = /[\u0400-\u04ff]/u;
const UKRAINIAN = /[іїєґ]/u;
const RUSSIAN = /[ыэъё]/u;

/** Rule sets to try, most likely language first. */
function candidateLangs(text: string): CorrectionLang[] {
  if (KANA.test(text)) return ['ja', 'zh'];
  if (HAN.test(text)) return ['zh', 'ja'];
  const words = text.slice(0, 400).split(/[^\p{L}'-]+/u);
  if (CYRILLIC.test(text)) {
    if (UKRAINIAN.test(text)) return ['uk', 'ru'];
    if (RUSSIAN.test(text)) return ['ru', 'uk'];
    let uk = 0;
    let ru = 0;
    for (const word of words) {
      if (CYRILLIC_HINTS[0]?.[1].has(word)) uk++;
      if (CYRILLIC_HINTS[1]?.[1].has(word)) ru++;
    }
    return uk > ru ? ['uk', 'ru'] : ['ru', 'uk'];
  }
  let best: CorrectionLang = 'en';
  let bestScore = 0;
  const scores = new Map<CorrectionLang, number>();
  for (const word of words) {
    if (word.length === 0) continue;
    for (const [lang, hints] of LATIN_HINTS) {
      if (hints.has(word)) scores.set(lang, (scores.get(lang) ?? 0) + 1);
    }
    if (FRENCH_ELISION.test(word)) scores.set('fr', (scores.get('fr') ?? 0) + 1);
  }
  for (const [lang, score] of scores) {
    if (score > bestScore) {
      best = lang;
      bestScore = score;
    }
  }
  // The guessed language, then English (commands are often typed in English mid-sentence).
  return best === 'en' ? ['en'] : [best, 'en'];
}

/** Lower-case, straight apostrophes, no leading quote / markdown / whitespace. */
function normalize(text: string): string {
  return text
    .slice(0, 2_000)
    .replace(/[\u2018\u2019\u02bc`´]/gu, "'")
    .toLowerCase()
    .replace(/[*`]+|(?<!\w)_+|_+(?!\w)/gu, '')
    .replace(/^[\s>"'«»“”„\-–—]+/u, '');
}

/**
 * Whether a user message pushes back on what the agent did, and in which language.
 * @example detectPushback("no, use the other table") // { lang: 'en', cue: 'no,' }
 * @example detectPushback("no problem, thanks") // null
 */
export function detectPushback(text: string): PushbackMatch | null {
  const normalized = normalize(text);
  if (normalized.length === 0) return null;
  for (const lang of candidateLangs(normalized)) {
    const rules = RULES()[lang];
    const excluded = rules.exclude.test(normalized);
    if (!excluded) {
      const start = rules.start.exec(normalized);
      if (start) return { lang, cue: start[0].trim() };
    }
    const anywhere = rules.anywhere.exec(normalized);
    if (anywhere) return { lang, cue: anywhere[0].trim() };
  }
  return null;
}

/** The language a text is most likely written in, among those the patterns cover. */
export function guessLanguage(text: string): CorrectionLang {
  return candidateLangs(normalize(text))[0] ?? 'en';
}
