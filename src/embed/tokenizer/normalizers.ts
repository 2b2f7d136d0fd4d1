/**
 * The tokenizer.json normalizers (Hugging Face tokenizers), as string → string functions.
 * Offsets are not tracked: static embedders only need the resulting tokens.
 */
import { asObject, bool, pattern, str, unsupported, type Json } from './config.js';

export type Normalizer = (text: string) => string;

/** Printable ASCII plus \t \n \r: no control, accent, CJK or non-ASCII case to handle. */
const SIMPLE_ASCII = /^[\x20-\x7e\t\n\r]*$/;
const ASCII_WHITESPACE_CONTROLS = /[\t\n\r]/g;
/** Removed by clean_text: NUL, U+FFFD and every "other" (C*) character except \t \n \r. */
const CONTROLS = /(?![\t\n\r])[\p{C}\uFFFD]/gu;
const WHITESPACE = /[\t\n\r\p{White_Space}]/gu;
/** The CJK ranges BERT surrounds with spaces. */
const CJK =
  /[\u4E00-\u9FFF\u3400-\u4DBF\u{20000}-\u{2A6DF}\u{2A700}-\u{2B73F}\u{2B740}-\u{2B81F}\u{2B920}-\u{2CEAF}\uF900-\uFAFF\u{2F800}-\u{2FA1F}]/gu;
const NONSPACING_MARKS = /\p{Mn}/gu;
const MARKS = /\p{M}/gu;

/**
 * Lower-case code point by code point, as the reference does (Rust `char::to_lowercase`): the
 * only context-dependent rule of `String.prototype.toLowerCase` is the final sigma, so turning
 * every capital sigma into σ first makes the two agree.
 */
export function lowercase(text: string): string {
  return text.includes('Σ') ? text.replaceAll('Σ', 'σ').toLowerCase() : text.toLowerCase();
}

function stripNonspacingMarks(text: string): string {
  return text.normalize('NFD').replace(NONSPACING_MARKS, '');
}

export interface BertNormalizerOptions {
  cleanText: boolean;
  handleChineseChars: boolean;
  /** null follows `lowercase`, as in BERT. */
  stripAccents: boolean | null;
  lowercase: boolean;
}

export function bertNormalizer(options: BertNormalizerOptions): Normalizer {
  const strip = options.stripAccents ?? options.lowercase;
  return (text) => {
    if (SIMPLE_ASCII.test(text)) {
      const cleaned = options.cleanText ? text.replace(ASCII_WHITESPACE_CONTROLS, ' ') : text;
      return options.lowercase ? cleaned.toLowerCase() : cleaned;
    }
    let out = text;
    if (options.cleanText) out = out.replace(CONTROLS, '').replace(WHITESPACE, ' ');
    if (options.handleChineseChars) out = out.replace(CJK, ' $& ');
    if (strip) out = stripNonspacingMarks(out);
    if (options.lowercase) out = lowercase(out);
    return out;
  };
}

function sequence(normalizers: Normalizer[]): Normalizer {
  return (text) => normalizers.reduce((acc, normalize) => normalize(acc), text);
}

/** Build the normalizer a tokenizer.json describes (`null` → identity). */
export function buildNormalizer(value: unknown): Normalizer {
  if (value === null || value === undefined) return (text) => text;
  const config: Json = asObject(value, 'normalizer');
  const type = str(config, 'type', '');
  switch (type) {
    case 'BertNormalizer':
      return bertNormalizer({
        cleanText: bool(config, 'clean_text', true),
        handleChineseChars: bool(config, 'handle_chinese_chars', true),
        stripAccents: typeof config['strip_accents'] === 'boolean' ? config['strip_accents'] : null,
        lowercase: bool(config, 'lowercase', true),
      });
    case 'Sequence': {
      const list = config['normalizers'];
      return sequence((Array.isArray(list) ? list : []).map(buildNormalizer));
    }
    case 'Lowercase':
      return lowercase;
    case 'StripAccents':
      return (text) => text.replace(MARKS, '');
    case 'NFC':
    case 'NFD':
    case 'NFKC':
    case 'NFKD':
      return (text) => text.normalize(type);
    case 'Strip': {
      const left = bool(config, 'strip_left', true);
      const right = bool(config, 'strip_right', true);
      return (text) => {
        let out = left ? text.replace(/^\p{White_Space}+/u, '') : text;
        if (right) out = out.replace(/\p{White_Space}+$/u, '');
        return out;
      };
    }
    case 'Replace': {
      const regex = pattern(config['pattern'], 'Replace normalizer');
      const content = str(config, 'content', '');
      return (text) => text.replace(regex, () => content);
    }
    case 'Prepend': {
      const prefix = str(config, 'prepend', '');
      return (text) => (text.length > 0 ? prefix + text : text);
    }
    default:
      throw unsupported(`normalizer type ${type || '(none)'}`);
  }
}
