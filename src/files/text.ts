import { normalizeType } from "./presign";

/** Text beyond this many bytes of a file is not indexed (the file itself is stored whole). */
export const MAX_INDEXED_TEXT_BYTES = 5 * 1024 * 1024;
/** PDFs are parsed in memory (pdf.js needs the whole document): larger ones are stored, not indexed. */
export const MAX_PDF_BYTES = 20 * 1024 * 1024;
/** Blocks aim at this many characters (paragraphs are packed up to it) and never exceed `BLOCK_MAX`. */
const BLOCK_TARGET = 1_500;
const BLOCK_MAX = 4_000;

const TEXT_TYPES = new Set(["text/plain", "text/markdown", "text/x-markdown", "application/json", "text/csv", "application/csv", "text/tab-separated-values"]);

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

/** The text of a PDF, page by page, via `unpdf` (pdf.js, pure JavaScript: runs under Bun and in the binary). */
export async function pdfText(bytes: Uint8Array): Promise<string> {
  const { extractText, getDocumentProxy } = await import("unpdf");
  // pdf.js refuses a Node Buffer: hand it a plain Uint8Array view.
  const pdf = await getDocumentProxy(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const { text } = await extractText(pdf, { mergePages: false });
  return text.join("\n\n");
}

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
    else for (const line of trimmed.split("\n")) for (let i = 0; i < line.length; i += BLOCK_MAX) if (line.slice(i, i + BLOCK_MAX).trim()) pieces.push(line.slice(i, i + BLOCK_MAX));
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
