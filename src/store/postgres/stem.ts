/**
 * The Porter stemmer (M. F. Porter, 1980), the algorithm SQLite's FTS5 `porter` tokenizer
 * applies on top of cairn's terms. PostgreSQL gets the same treatment in JavaScript, so a
 * memory indexed as `changes` answers `change` on both backends, while code terms such as
 * `process_workspace_changes` stay single lexemes (the server's parser would split them).
 *
 * Like FTS5, terms shorter than 3 or longer than 64 characters, and terms with characters
 * outside `[a-z0-9_]`, pass through unchanged.
 */

const MAX_TOKEN = 64;

function isConsonant(word: string, i: number): boolean {
  const c = word[i];
  if (c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u') return false;
  if (c === 'y') return i === 0 ? true : !isConsonant(word, i - 1);
  return true;
}

/** m() of the stem word[0..end): the number of vowel-consonant sequences. */
function measure(word: string, end: number): number {
  let n = 0;
  let i = 0;
  while (i < end && isConsonant(word, i)) i++;
  while (i < end) {
    while (i < end && !isConsonant(word, i)) i++;
    if (i >= end) break;
    n++;
    while (i < end && isConsonant(word, i)) i++;
  }
  return n;
}

function hasVowel(word: string, end: number): boolean {
  for (let i = 0; i < end; i++) if (!isConsonant(word, i)) return true;
  return false;
}

function doubleConsonant(word: string, end: number): boolean {
  return end >= 2 && word[end - 1] === word[end - 2] && isConsonant(word, end - 1);
}

/** *o: the stem ends consonant-vowel-consonant, the last not w, x or y. */
function cvc(word: string, end: number): boolean {
  if (end < 3 || !isConsonant(word, end - 1) || isConsonant(word, end - 2) || !isConsonant(word, end - 3)) return false;
  const c = word[end - 1];
  return c !== 'w' && c !== 'x' && c !== 'y';
}

/** Replace `suffix` by `replacement` when the remaining stem has measure > `minMeasure`. */
function replaceIf(word: string, suffix: string, replacement: string, minMeasure: number): string | null {
  if (!word.endsWith(suffix)) return null;
  const stem = word.length - suffix.length;
  return measure(word, stem) > minMeasure ? word.slice(0, stem) + replacement : word;
}

const STEP2: Array<[string, string]> = [
  ['ational', 'ate'], ['tional', 'tion'], ['enci', 'ence'], ['anci', 'ance'], ['izer', 'ize'], ['bli', 'ble'],
  ['alli', 'al'], ['entli', 'ent'], ['eli', 'e'], ['ousli', 'ous'], ['ization', 'ize'], ['ation', 'ate'],
  ['ator', 'ate'], ['alism', 'al'], ['iveness', 'ive'], ['fulness', 'ful'], ['ousness', 'ous'], ['aliti', 'al'],
  ['iviti', 'ive'], ['biliti', 'ble'], ['logi', 'log'],
];
const STEP3: Array<[string, string]> = [
  ['icate', 'ic'], ['ative', ''], ['alize', 'al'], ['iciti', 'ic'], ['ical', 'ic'], ['ful', ''], ['ness', ''],
];
const STEP4 = ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ion', 'ou', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize'];

function step1(word: string): string {
  // 1a
  if (word.endsWith('sses')) word = word.slice(0, -2);
  else if (word.endsWith('ies')) word = word.slice(0, -2);
  else if (!word.endsWith('ss') && word.endsWith('s')) word = word.slice(0, -1);
  // 1b
  let extra = false;
  if (word.endsWith('eed')) {
    if (measure(word, word.length - 3) > 0) word = word.slice(0, -1);
  } else if (word.endsWith('ed') && hasVowel(word, word.length - 2)) {
    word = word.slice(0, -2);
    extra = true;
  } else if (word.endsWith('ing') && hasVowel(word, word.length - 3)) {
    word = word.slice(0, -3);
    extra = true;
  }
  if (extra) {
    if (word.endsWith('at') || word.endsWith('bl') || word.endsWith('iz')) word += 'e';
    else if (doubleConsonant(word, word.length) && !/[lsz]$/.test(word)) word = word.slice(0, -1);
    else if (measure(word, word.length) === 1 && cvc(word, word.length)) word += 'e';
  }
  // 1c
  if (word.endsWith('y') && hasVowel(word, word.length - 1)) word = `${word.slice(0, -1)}i`;
  return word;
}

function applyList(word: string, list: Array<[string, string]>): string {
  for (const [suffix, replacement] of list) {
    const replaced = replaceIf(word, suffix, replacement, 0);
    if (replaced !== null) return replaced;
  }
  return word;
}

function step4(word: string): string {
  for (const suffix of STEP4) {
    if (!word.endsWith(suffix)) continue;
    const stem = word.length - suffix.length;
    if (measure(word, stem) <= 1) return word;
    if (suffix === 'ion' && !/[st]$/.test(word.slice(0, stem))) return word;
    return word.slice(0, stem);
  }
  return word;
}

function step5(word: string): string {
  if (word.endsWith('e')) {
    const stem = word.length - 1;
    const m = measure(word, stem);
    if (m > 1 || (m === 1 && !cvc(word, stem))) word = word.slice(0, stem);
  }
  if (measure(word, word.length) > 1 && doubleConsonant(word, word.length) && word.endsWith('l')) word = word.slice(0, -1);
  return word;
}

/** The Porter stem of one lower-case term. */
export function stem(term: string): string {
  if (term.length < 3 || term.length > MAX_TOKEN || !/^[a-z0-9_]+$/.test(term)) return term;
  let word = step1(term);
  word = applyList(word, STEP2);
  word = applyList(word, STEP3);
  word = step4(word);
  return step5(word);
}
