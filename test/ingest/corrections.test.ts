import { describe, expect, it } from 'vitest';
import { detectPushback, findCorrections, guessLanguage } from '../../src/ingest/index.js';
import type { TurnRecord } from '../../src/types.js';

/** Per language: messages that push back on the agent, and ordinary ones that must not count. */
const CASES: Record<string, { yes: string[]; no: string[] }> = {
  en: {
    yes: [
      'no, use the existing parser',
      'No. That is the wrong table.',
      "that's wrong, the limit is 100",
      "don't touch the migrations",
      'I said use pnpm, not npm',
      'actually, keep the old name',
      'stop, you are editing the wrong file',
      'not the header but the footer',
      'why did you delete the tests?',
      'you forgot the null check',
      "it's not a JSON file, it's YAML",
      'That broke everything.',
      'still failing',
    ],
    no: [
      'no problem, thanks!',
      "don't worry about the docs for now",
      'No rush, take your time',
      'add a retry to the fetch call',
      'Nothing else, looks great',
      'not sure, what do you think?',
      'notes go in docs/notes.md',
      'stop the dev server and run the build',
      'nobody uses that endpoint anymore, remove it',
    ],
  },
  ru: {
    yes: ['нет, используй существующий парсер', 'неправильно, лимит 100', 'не надо трогать миграции', 'я же сказал использовать pnpm', 'стоп, это не тот файл', 'не заголовок, а подвал'],
    no: ['нет проблем, спасибо', 'не волнуйся насчёт документации', 'добавь повтор запроса', 'отлично, всё работает', 'нетривиальная задача: добавь кэш'],
  },
  uk: {
    yes: ['ні, використай існуючий парсер', 'неправильно, ліміт 100', 'не треба чіпати міграції', 'я ж казав використовувати pnpm', 'стоп, це не той файл', 'не заголовок, а підвал'],
    no: ['немає проблем, дякую', 'не хвилюйся про документацію', 'додай повтор запиту', 'чудово, все працює', 'нічого страшного, продовжуй'],
  },
  de: {
    yes: ['nein, nimm den vorhandenen Parser', 'falsch, das Limit ist 100', 'das stimmt nicht, die Tabelle heißt users', 'ich habe doch gesagt, pnpm zu benutzen', 'nicht die Kopfzeile, sondern die Fußzeile', 'Stopp, das ist die falsche Datei'],
    no: ['kein Problem, danke', 'keine Sorge wegen der Doku', 'füge einen Retry hinzu', 'super, das funktioniert', 'nenne die Funktion loadUser'],
  },
  fr: {
    yes: ["non, utilise le parseur existant", "c'est faux, la limite est 100", "j'ai dit d'utiliser pnpm", 'ne touche pas aux migrations', "pas l'en-tête mais le pied de page", 'arrête, ce n\'est pas le bon fichier'],
    no: ['pas de problème, merci', "ne t'inquiète pas pour la doc", 'ajoute une relance à la requête', 'parfait, ça marche', 'nomme la fonction loadUser'],
  },
  es: {
    yes: ['no, usa el parser existente', 'eso está mal, el límite es 100', 'te dije que usaras pnpm', 'no toques las migraciones', 'no la cabecera sino el pie', 'para, ese no es el archivo'],
    no: ['no hay problema, gracias', 'no te preocupes por la documentación', 'añade un reintento a la petición', 'perfecto, funciona', 'para el proyecto nuevo, crea un README'],
  },
  pt: {
    yes: ['não, use o parser existente', 'isso está errado, o limite é 100', 'eu disse para usar pnpm', 'não mexa nas migrações', 'não o cabeçalho mas o rodapé', 'pare, esse não é o arquivo certo'],
    no: ['sem problema, obrigado', 'não se preocupe com a documentação', 'adicione uma nova tentativa na requisição', 'perfeito, funciona', 'nomeie a função loadUser'],
  },
  zh: {
    yes: ['不对，用现有的解析器', '不是表头而是表尾', '我说过用 pnpm', '别动迁移文件', '错了，限制是 100', '你删了测试文件'],
    no: ['没问题，谢谢', '别担心文档', '给请求加上重试', '很好，可以运行了', '不客气'],
  },
  ja: {
    yes: ['違う、既存のパーサーを使って', 'ヘッダーじゃなくてフッター', 'pnpm を使うって言った', 'マイグレーションは変更しないで', 'やめて、そのファイルではない', 'いいえ、上限は100です'],
    no: ['問題ないです、ありがとう', '心配しないで、ドキュメントは後で', 'リクエストにリトライを追加して', '完璧です、動きました', 'どういたしまして'],
  },
};

describe('detectPushback', () => {
  for (const [lang, { yes, no }] of Object.entries(CASES)) {
    describe(lang, () => {
      it.each(yes)('pushback: %s', (text) => {
        expect(detectPushback(text)).toMatchObject({ lang });
      });
      it.each(no)('not pushback: %s', (text) => {
        expect(detectPushback(text)).toBeNull();
      });
    });
  }

  it('ignores leading quotes, markdown and curly apostrophes', () => {
    expect(detectPushback('> “No, that’s wrong”')).toMatchObject({ lang: 'en' });
    expect(detectPushback('**don’t** change the API')).toMatchObject({ lang: 'en' });
  });

  it('guesses the language of a message', () => {
    expect(guessLanguage('no, usa la otra función')).toBe('es');
    expect(guessLanguage('não faça isso')).toBe('pt');
    expect(guessLanguage('це неправильно')).toBe('uk');
    expect(guessLanguage('это неправильно')).toBe('ru');
    expect(guessLanguage('错了')).toBe('zh');
    expect(guessLanguage('違う')).toBe('ja');
    expect(guessLanguage('ちがうよ')).toBe('ja');
  });
});

function turn(id: string, role: TurnRecord['role'], text: string, flags: string[] = [], sessionId = 's'): TurnRecord {
  return { id, sessionId, seq: 0, role, text, toolName: null, toolInput: null, toolUseId: null, isError: false, flags, at: null, sourceUuid: null, sourceLine: 0 };
}

describe('findCorrections', () => {
  const carry = () => ({ lastAgent: new Map<string, string>(), pending: new Map() });

  it('pairs a correction with the latest agent turn before it', () => {
    const turns = [
      turn('u1', 'user', "don't use classes here"),
      turn('a1', 'assistant', 'I will refactor into a class.'),
      turn('c1', 'tool_call', 'Edit: src/a.ts'),
      turn('r1', 'tool_result', 'ok'),
      turn('u2', 'user', 'no, keep plain functions'),
    ];
    // the first prompt has no premise: an instruction, not a correction
    expect(findCorrections(turns, carry())).toMatchObject([{ id: 'u2:correction', premiseTurnId: 'c1', correctionTurnId: 'u2', kind: 'pushback', lang: 'en' }]);
  });

  it('records interrupts and rejections even without a premise', () => {
    const out = findCorrections([turn('i', 'user', '[Request interrupted by user]', ['interrupt']), turn('r', 'tool_result', 'rejected', ['rejection'])], carry());
    expect(out.map((c) => [c.kind, c.premiseTurnId])).toEqual([
      ['interrupt', null],
      ['rejection', null],
    ]);
  });

  it("marks a neutral message as a correction when the agent's next reply concedes it", () => {
    const turns = [
      turn('a0', 'assistant', 'I will track each terminal tab separately.'),
      turn('u1', 'user', "we don't control that process, it's a third-party tool"),
      turn('a1', 'assistant', "You're absolutely right! I was conflating the two."),
      turn('u2', 'user', 'what about error handling?'),
      turn('a2', 'assistant', 'Good point! Let me add it.'),
    ];
    expect(findCorrections(turns, carry()).map((c) => [c.correctionTurnId, c.premiseTurnId, c.kind])).toEqual([['u1', 'a0', 'pushback']]);
  });

  it('carries the premise and the waiting message across reader passes', () => {
    const state = carry();
    expect(findCorrections([turn('a0', 'assistant', 'Using npm.'), turn('u1', 'user', 'the lockfile is pnpm-lock.yaml')], state)).toEqual([]);
    expect(findCorrections([turn('a1', 'assistant', "You're right, switching to pnpm.")], state).map((c) => c.correctionTurnId)).toEqual(['u1']);
    expect(findCorrections([turn('u2', 'user', 'no, pnpm 9 not 8')], state)).toMatchObject([{ premiseTurnId: 'a1' }]);
  });

  it('keeps sessions apart and skips slash commands and meta turns', () => {
    const turns = [
      turn('a', 'assistant', 'Done.', [], 's1'),
      turn('u', 'user', 'no, wrong file', [], 's2'),
      turn('c', 'user', '/compact no summary please', ['slash-command'], 's1'),
    ];
    expect(findCorrections(turns, carry())).toEqual([]);
  });
});
