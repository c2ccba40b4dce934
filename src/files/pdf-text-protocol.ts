/**
 * What the server and the PDF text child process say to each other (src/files/pdf-text.ts
 * starts the child, src/files/pdf-text-child.ts is the child). Nothing here imports
 * anything: the CLI entry imports the command name at its top.
 *
 * Request, on the child's stdin: one JSON line of {@link PdfTextBudget}, then the PDF's bytes.
 * Answer, on its stdout: one JSON line of {@link PdfChildAnswer}, then, when `ok`, exactly
 * `textBytes` bytes of UTF-8 text (pages separated by a blank line).
 */

/** The hidden `mnemo` command a compiled binary runs itself with to become the child. */
export const PDF_TEXT_CHILD_COMMAND = "__pdf-text-child";

/**
 * What reading one PDF may cost. The child applies all four itself; the server also kills
 * it from outside past the memory and time budgets (a child busy in one long synchronous
 * step cannot check, and a server that died leaves a child that still stops on its own).
 */
export interface PdfTextBudget {
  /** A PDF with more pages is not read at all. */
  maxPages: number;
  /** Reading stops, and nothing is indexed, once the text passes this many UTF-8 bytes. */
  maxTextBytes: number;
  /** Resident memory of the child. */
  memoryBytes: number;
  /** Wall time of the child, from its start. */
  timeMs: number;
}

/** Why a file's text is not in the search index. */
export type NotIndexedReason =
  /** Its type carries no text Mnemo reads (images, archives, binaries). */
  | "type"
  /** Stored sealed with the owner's client key (reverse-proxy mode): its bytes are never read. */
  | "sealed"
  /** A PDF over MAX_PDF_BYTES: pdf.js needs the whole document in memory. */
  | "file_too_large"
  /** A PDF of more than MAX_PDF_PAGES pages. */
  | "too_many_pages"
  /** A PDF whose text passes MAX_INDEXED_TEXT_BYTES. */
  | "text_too_large"
  /** Reading it needed more memory than the extractor's budget (a decompression bomb, typically). */
  | "memory_limit"
  /** Reading it took longer than the extractor's budget. */
  | "time_limit"
  /** Not a PDF pdf.js can read (damaged, or encrypted with a password). */
  | "unreadable";

export type PdfChildAnswer =
  | { ok: true; pages: number; textBytes: number }
  | {
      ok: false;
      reason: Extract<
        NotIndexedReason,
        "too_many_pages" | "text_too_large" | "memory_limit" | "time_limit" | "unreadable"
      >;
      detail?: string;
    };
