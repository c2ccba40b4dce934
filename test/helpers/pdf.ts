import { deflateSync } from "node:zlib";
import { waitFor } from "./wait";

/**
 * A PDF written byte by byte: one page per content stream (Helvetica as F1), Flate-compressed
 * when asked. Pages may share one stream object (`sharedContent`), so a PDF of thousands of
 * pages stays small.
 */
export function pdfDocument(
  pages: Array<string | Buffer>,
  options: { compress?: boolean; sharedContent?: boolean } = {},
): Uint8Array {
  const streams = options.sharedContent ? pages.slice(0, 1) : pages;
  const fontId = 3;
  const firstStream = fontId + 1;
  const firstPage = firstStream + streams.length;
  const objects: Array<string | Buffer[]> = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${pages.map((_, i) => `${firstPage + i} 0 R`).join(" ")}] /Count ${pages.length} >>`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ...streams.map((content) => {
      const raw = typeof content === "string" ? Buffer.from(content, "latin1") : content;
      const body = options.compress ? deflateSync(raw, { level: 9 }) : raw;
      return [
        Buffer.from(
          `<< /Length ${body.length}${options.compress ? " /Filter /FlateDecode" : ""} >>\nstream\n`,
          "latin1",
        ),
        body,
        Buffer.from("\nendstream", "latin1"),
      ];
    }),
    ...pages.map(
      (_, i) =>
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${firstStream + (options.sharedContent ? 0 : i)} 0 R /Resources << /Font << /F1 ${fontId} 0 R >> >> >>`,
    ),
  ];
  const parts: Buffer[] = [Buffer.from("%PDF-1.4\n", "latin1")];
  let size = parts[0].length;
  const push = (part: Buffer) => {
    parts.push(part);
    size += part.length;
  };
  const offsets = objects.map((object, i) => {
    const at = size;
    push(Buffer.from(`${i + 1} 0 obj\n`, "latin1"));
    for (const part of typeof object === "string" ? [Buffer.from(object, "latin1")] : object) push(part);
    push(Buffer.from("\nendobj\n", "latin1"));
    return at;
  });
  const xref = size;
  push(
    Buffer.from(
      `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`,
      "latin1",
    ),
  );
  push(Buffer.from(`trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`, "latin1"));
  return new Uint8Array(Buffer.concat(parts, size));
}

/** A one-page PDF showing `text` (compressed, as PDFs usually are). */
export const textPdf = (text: string) => pdfDocument([`BT /F1 18 Tf 20 700 Td (${text}) Tj ET`], { compress: true });

/** The line of text operators a bomb repeats: one show-text each. */
const BOMB_LINE = "BT /F1 12 Tf 72 712 Td (All work and no play makes Jack a dull boy) Tj ET\n";

/**
 * A decompression bomb: one page whose Flate-compressed content stream (about 70 KB)
 * inflates to `inflatedBytes` of text operators (default 20 MB, about 12 MB of text).
 */
export function pdfBomb(inflatedBytes = 20 * 1024 * 1024): Uint8Array {
  return pdfDocument([Buffer.from(BOMB_LINE.repeat(Math.ceil(inflatedBytes / BOMB_LINE.length)), "latin1")], {
    compress: true,
  });
}

/** The words a bomb's text is made of, to check that none of it reached a log or an index. */
export const BOMB_WORDS = "All work and no play";

/** A PDF of `count` pages that all show the same short line (one shared stream). */
export const manyPagesPdf = (count: number) =>
  pdfDocument(
    Array.from({ length: count }, () => "BT /F1 12 Tf 72 712 Td (page) Tj ET"),
    { sharedContent: true },
  );

type Indexing = { status: string; reason?: string; message?: string };

/**
 * Asks `listFiles` until the file `key`'s text is no longer pending, and returns its
 * indexing state: a wait on state (test/helpers/wait.ts), whose deadline only guards a hang.
 */
export async function waitForText(
  listFiles: () => Promise<Array<{ key: string; indexing: Indexing }>>,
  key: string,
): Promise<Indexing> {
  return waitFor(
    async () => {
      const file = (await listFiles()).find((f) => f.key === key);
      if (!file) throw new Error(`file ${key} is not listed`);
      return file.indexing.status !== "pending" ? file.indexing : null;
    },
    { what: `the text of file ${key} to be read` },
  );
}
