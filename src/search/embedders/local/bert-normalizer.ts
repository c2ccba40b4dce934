/**
 * BERT's "basic tokenizer": text cleanup, lower-casing, accent stripping and the split
 * into words and punctuation that happens before WordPiece. Mirrors the `BertNormalizer`
 * and `BertPreTokenizer` of Hugging Face `tokenizers`, so ids match the Python models.
 */

/** Options read from a `tokenizer.json` normalizer of type `BertNormalizer`. */
export interface BertNormalizerOptions {
  /** Drop control characters and turn every whitespace character into a space. */
  cleanText: boolean;
  /** Surround CJK ideographs with spaces so each becomes its own word. */
  handleChineseChars: boolean;
  /** Decompose (NFD) and drop combining marks. */
  stripAccents: boolean;
  lowercase: boolean;
}

/** The settings of uncased BERT vocabularies such as MiniLM's and bge's. */
export const UNCASED_BERT: BertNormalizerOptions = {
  cleanText: true,
  handleChineseChars: true,
  stripAccents: true,
  lowercase: true,
};

const CONTROL = /\p{C}/u;
const UNICODE_SPACE = /\p{Zs}/u;
const UNICODE_PUNCTUATION = /\p{P}/u;
// `tokenizers` drops every combining mark (category M), not only Mn as the Python BERT did.
const COMBINING_MARKS = /\p{M}/gu;
// Rust's char::is_whitespace, used by BertPreTokenizer, also counts line/paragraph separators.
const WHITESPACE_RUN = /[\s\u2028\u2029]+/u;

function isBertWhitespace(code: number, char: string): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d || UNICODE_SPACE.test(char);
}

function isBertControl(code: number, char: string): boolean {
  if (code === 0x09 || code === 0x0a || code === 0x0d) return false;
  return CONTROL.test(char);
}

/** BERT counts all non-alphanumeric ASCII as punctuation, plus Unicode category P. */
export function isBertPunctuation(code: number, char: string): boolean {
  if ((code >= 33 && code <= 47) || (code >= 58 && code <= 64)) return true;
  if ((code >= 91 && code <= 96) || (code >= 123 && code <= 126)) return true;
  return code > 127 && UNICODE_PUNCTUATION.test(char);
}

/** The CJK Unified Ideograph blocks BERT isolates (not Hangul or kana, which use spaces). */
function isChineseChar(code: number): boolean {
  return (
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x20000 && code <= 0x2a6df) ||
    (code >= 0x2a700 && code <= 0x2b73f) ||
    (code >= 0x2b740 && code <= 0x2b81f) ||
    (code >= 0x2b820 && code <= 0x2ceaf) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0x2f800 && code <= 0x2fa1f)
  );
}

/**
 * Applies the normalizer steps in the order `tokenizers` does: clean, CJK, accents, case.
 *
 * @example
 * normalizeBertText("Héllo\tWORLD", UNCASED_BERT); // "hello world"
 */
export function normalizeBertText(text: string, options: BertNormalizerOptions): string {
  let out = "";
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (options.cleanText) {
      if (code === 0 || code === 0xfffd || isBertControl(code, char)) continue;
      if (isBertWhitespace(code, char)) {
        out += " ";
        continue;
      }
    }
    if (options.handleChineseChars && isChineseChar(code)) out += ` ${char} `;
    else out += char;
  }
  if (options.stripAccents) out = out.normalize("NFD").replace(COMBINING_MARKS, "");
  if (options.lowercase) out = out.toLowerCase();
  return out;
}

/**
 * Splits normalised text into words on whitespace and isolates each punctuation character.
 *
 * @example
 * splitBertWords("don't stop!"); // ["don", "'", "t", "stop", "!"]
 */
export function splitBertWords(text: string): string[] {
  const words: string[] = [];
  for (const chunk of text.split(WHITESPACE_RUN)) {
    if (chunk === "") continue;
    let current = "";
    for (const char of chunk) {
      if (isBertPunctuation(char.codePointAt(0)!, char)) {
        if (current !== "") words.push(current);
        words.push(char);
        current = "";
      } else {
        current += char;
      }
    }
    if (current !== "") words.push(current);
  }
  return words;
}
