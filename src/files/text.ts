import { describeBytes } from "../lib/bytes";
import type { NotIndexedReason, PdfTextBudget } from "./pdf-text-protocol";
import { normalizeType } from "./presign";

/**
 * Text beyond this many bytes of a text file is not indexed (the file itself is stored
 * whole); a PDF whose text is longer is not indexed at all.
 */
export const MAX_INDEXED_TEXT_BYTES = 5 * 1024 * 1024;
/** PDFs are parsed in memory (pdf.js needs the whole document): larger ones are stored, not indexed. */
export const MAX_PDF_BYTES = 20 * 1024 * 1024;
/** PDFs of more pages are stored, not indexed. */
export const MAX_PDF_PAGES = 2_000;
/**
 * What reading one PDF's text may cost the child process it runs in: room for the largest
 * book the page limit admits, with a margin (docs/performance.md#why-the-code-is-tuned-as-it-is).
 */
export const PDF_TEXT_BUDGET: PdfTextBudget = {
  maxPages: MAX_PDF_PAGES,
  maxTextBytes: MAX_INDEXED_TEXT_BYTES,
  memoryBytes: 512 * 1024 * 1024,
  timeMs: 120_000,
};
/** Blocks aim at this many characters (paragraphs are packed up to it) and never exceed `BLOCK_MAX`. */
const BLOCK_TARGET = 1_500;
const BLOCK_MAX = 4_000;

const TEXT_TYPES = new Set([
  "text/plain",
  "text/markdown",
  "text/x-markdown",
  "application/json",
  "text/csv",
  "application/csv",
  "text/tab-separated-values",
]);

/** How a file's text is obtained: read as UTF-8, parsed as PDF, or not at all. */
export function textKind(contentType: string): "text" | "pdf" | null {
  const type = normalizeType(contentType).split(";")[0];
  if (TEXT_TYPES.has(type) || type.endsWith("+json")) return "text";
  if (type === "application/pdf") return "pdf";
  return null;
}

/** Reads at most `limit` bytes of a stream (and stops reading there). */
export async function readPrefix(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value.subarray(0, limit - size));
      size += Math.min(value.byteLength, limit - size);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return Buffer.concat(parts, size);
}

/** Where a file's text stands: `pending` while a PDF waits for (or is in) extraction. */
export type TextStatus = "pending" | "indexed" | "not_indexed";

/** A file's text state as the API shows it. */
export interface TextIndexing {
  status: TextStatus;
  reason?: NotIndexedReason;
  message?: string;
}

const REASON_MESSAGES: Record<NotIndexedReason, string> = {
  type: "files of this type carry no text Mnemo reads",
  sealed: "stored sealed with your client key: its text is never read, as for encrypted notes",
  file_too_large: `PDFs over ${describeBytes(MAX_PDF_BYTES)} are stored, not indexed`,
  too_many_pages: `PDFs of more than ${MAX_PDF_PAGES.toLocaleString("en-US")} pages are stored, not indexed`,
  text_too_large: `its text is over ${describeBytes(MAX_INDEXED_TEXT_BYTES)}, the most a PDF may have to be indexed`,
  memory_limit: `reading its text needed more than ${describeBytes(PDF_TEXT_BUDGET.memoryBytes)} of memory`,
  time_limit: `reading its text took longer than ${PDF_TEXT_BUDGET.timeMs / 1000} s`,
  unreadable: "its text could not be read (a damaged PDF, or one that needs a password)",
};

/**
 * The text state of a file: what was recorded, or for files stored before states were
 * (status null) what their type implies: their text was read at upload.
 */
export function textIndexing(file: {
  contentType: string;
  textStatus: TextStatus | null;
  textReason: NotIndexedReason | null;
}): TextIndexing {
  if (file.textStatus === null) return textKind(file.contentType) ? { status: "indexed" } : notIndexed("type");
  if (file.textStatus === "not_indexed") return notIndexed(file.textReason ?? "unreadable");
  return { status: file.textStatus };
}

export const notIndexed = (reason: NotIndexedReason): TextIndexing => ({
  status: "not_indexed",
  reason,
  message: REASON_MESSAGES[reason],
});

/**
 * Splits text into search blocks: paragraphs (blank-line separated) packed up to
 * `BLOCK_TARGET` characters; a paragraph longer than `BLOCK_MAX` is split at line ends,
 * and a line longer than that at `BLOCK_MAX`. CSV and JSON fall under the same rule
 * (rows and lines are packed), so a row is never cut unless it alone is huge.
 */
export function splitBlocks(text: string): string[] {
  const pieces: string[] = [];
  for (const paragraph of text.replace(/\r\n?/g, "\n").split(/\n\s*\n/)) {
    const trimmed = paragraph.trim();
    if (!trimmed) continue;
    if (trimmed.length <= BLOCK_MAX) pieces.push(trimmed);
    else
      for (const line of trimmed.split("\n"))
        for (let i = 0; i < line.length; i += BLOCK_MAX)
          if (line.slice(i, i + BLOCK_MAX).trim()) pieces.push(line.slice(i, i + BLOCK_MAX));
  }
  const blocks: string[] = [];
  let current = "";
  for (const piece of pieces) {
    if (current && current.length + piece.length + 2 > BLOCK_TARGET) {
      blocks.push(current);
      current = "";
    }
    current = current ? `${current}\n\n${piece}` : piece;
  }
  if (current) blocks.push(current);
  return blocks;
}
