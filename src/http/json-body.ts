import { badRequest, payloadTooLarge } from "../shared/app-error";
import type { JsonLimits } from "../lib/body-limits";
import { describeBytes } from "../lib/bytes";
import { NUL_PROBLEM } from "../lib/nul-text";

const QUOTE = 34,
  BACKSLASH = 92,
  OPEN_ARRAY = 91,
  CLOSE_ARRAY = 93,
  OPEN_OBJECT = 123,
  CLOSE_OBJECT = 125,
  COMMA = 44,
  COLON = 58;

interface Frame {
  array: boolean;
  /** Arrays: the index of the current element. */
  index: number;
  /** Objects: whether the next string is a key, and where the current key sits in the text. */
  expectKey: boolean;
  keyStart: number;
  keyEnd: number;
}

/**
 * Checks a JSON text against the limits in one pass, before anything parses it, so a
 * hostile body costs linear time and no recursion: JSON.parse, schema validation and
 * JSON.stringify then only ever see bounded depth. Also refuses unpaired UTF-16
 * surrogates written as `\uD800` escapes: SQLite and PostgreSQL store UTF-8, which cannot
 * hold them, so the value stored would differ from the value echoed; and `\u0000`, which
 * PostgreSQL text cannot hold (nul-text.ts), so both backends refuse it alike.
 * Errors name the field: the top-level key for depth and size, the full path for a
 * surrogate. Malformed JSON is left to JSON.parse, which reports it.
 */
export function checkJsonText(text: string, limits: Pick<JsonLimits, "depth" | "nodes">): void {
  const stack: Frame[] = [];
  let nodes = 0;
  const length = text.length;
  let i = 0;
  const fail = (problem: string, full: boolean) => {
    throw badRequest(`${fieldName(text, stack, full)}: ${problem}`);
  };
  const countValue = () => {
    if (++nodes > limits.nodes)
      fail(
        `the body holds more than ${limits.nodes.toLocaleString("en-US")} JSON values, the limit of this route`,
        false,
      );
  };
  while (i < length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const top = stack[stack.length - 1];
      const isKey = top !== undefined && !top.array && top.expectKey;
      const end = endOfString(text, i + 1, (problem) => fail(isKey ? `a key ${problem}` : problem, true));
      if (isKey) {
        top.keyStart = i + 1;
        top.keyEnd = end;
        top.expectKey = false;
      } else countValue();
      i = end + 1;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      countValue();
      stack.push({ array: c === OPEN_ARRAY, index: 0, expectKey: c === OPEN_OBJECT, keyStart: -1, keyEnd: -1 });
      if (stack.length > limits.depth) fail(`nesting deeper than ${limits.depth} levels`, false);
      i++;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      stack.pop();
      i++;
    } else if (c === COMMA) {
      const top = stack[stack.length - 1];
      if (top?.array) top.index++;
      else if (top) top.expectKey = true;
      i++;
    } else if (c === COLON || c <= 32) {
      i++;
    } else {
      // A number, true, false or null (or garbage JSON.parse will refuse): one value.
      countValue();
      i++;
      while (i < length && isLiteralChar(text.charCodeAt(i))) i++;
    }
  }
}

/** Parses a request body after `checkJsonText`; malformed JSON is a 400 that says where. */
export function parseJsonText(text: string, limits: Pick<JsonLimits, "depth" | "nodes">): unknown {
  if (text.trim() === "") throw badRequest("request body is empty; send a JSON object");
  checkJsonText(text, limits);
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest("request body is not valid JSON");
  }
}

/**
 * Reads a request body as UTF-8 text, never holding more than `limit` bytes: a declared
 * Content-Length over the limit is refused before reading, a chunked body is counted
 * while it arrives and abandoned once it passes the limit.
 */
export async function readBodyText(request: Request, limit: number): Promise<string> {
  const tooLarge = () => payloadTooLarge(`body: is larger than ${describeBytes(limit)}, the limit of this route`);
  const declared = Number(request.headers.get("content-length") ?? NaN);
  let bytes: Uint8Array;
  // Bun delivers exactly the declared length, so a declared body is read whole once it fits.
  if (Number.isFinite(declared)) {
    if (declared > limit) throw tooLarge();
    bytes = new Uint8Array(await request.arrayBuffer());
  } else {
    bytes = await readCounted(request, limit, tooLarge);
  }
  try {
    return UTF8.decode(bytes);
  } catch {
    throw badRequest("body: is not valid UTF-8");
  }
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

async function readCounted(request: Request, limit: number, tooLarge: () => Error): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/**
 * The index of a string's closing quote, reporting `\uD800`-style escapes that are not a
 * high surrogate followed by a low one, and `\u0000` (a raw U+0000 is not JSON: JSON.parse
 * refuses it).
 */
function endOfString(text: string, from: number, fail: (problem: string) => never): number {
  const length = text.length;
  let i = from;
  while (i < length) {
    // The run up to the next quote or backslash is skipped by the regex engine, far faster
    // than a character loop over a 9 MB body's long strings: only escapes are looked at here.
    PLAIN_RUN.lastIndex = i;
    PLAIN_RUN.test(text);
    i = PLAIN_RUN.lastIndex;
    if (i >= length) break;
    if (text.charCodeAt(i) === QUOTE) return i;
    if (text.charCodeAt(i + 1) !== 117 /* u */) {
      i += 2;
      continue;
    }
    const unit = hexUnit(text, i + 2);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const low = text.charCodeAt(i + 6) === BACKSLASH && text.charCodeAt(i + 7) === 117 ? hexUnit(text, i + 8) : -1;
      if (low < 0xdc00 || low > 0xdfff) fail(unpaired(text, i));
      i += 12;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      fail(unpaired(text, i));
    } else if (unit === 0) {
      fail(NUL_PROBLEM);
    } else i += 6;
  }
  return length; // unterminated: JSON.parse reports it
}

/** Characters that neither end a string nor start an escape (sticky: matches from `lastIndex` on). */
const PLAIN_RUN = /[^"\\]*/y;

const unpaired = (text: string, at: number) =>
  `contains an unpaired UTF-16 surrogate (${text.slice(at, at + 6)}); send valid Unicode`;

function hexUnit(text: string, at: number): number {
  if (at + 4 > text.length) return -1;
  let unit = 0;
  for (let j = at; j < at + 4; j++) {
    const c = text.charCodeAt(j);
    const digit = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
    if (digit < 0) return -1;
    unit = unit * 16 + digit;
  }
  return unit;
}

const isLiteralChar = (c: number) =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 43 || c === 45 || c === 46;

/** The field at fault: the top-level key, or the whole path for `full`; `body` for a body that is not an object. */
function fieldName(text: string, stack: Frame[], full: boolean): string {
  if (stack[0]?.array) return "body";
  const segments: string[] = [];
  // stack[0] is the body itself; its current key is the field.
  for (let depth = 0; depth < stack.length; depth++) {
    const frame = stack[depth];
    if (frame.array) segments.push(String(frame.index));
    else if (frame.keyStart >= 0 && !frame.expectKey)
      segments.push(decodeKey(text.slice(frame.keyStart, frame.keyEnd)));
    else break;
    if (!full) break;
  }
  return segments.length ? segments.join(".") : "body";
}

function decodeKey(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`);
  } catch {
    return raw;
  }
}
