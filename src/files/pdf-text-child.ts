/**
 * The PDF text child process: reads one request on stdin, writes one answer on stdout,
 * exits (protocol in ./pdf-text-protocol.ts). pdf.js runs here and never in the server:
 * a PDF whose streams inflate without bound costs this process, which the server kills
 * at its memory or time budget, and whose memory the OS takes back when it ends.
 *
 * Started as `bun src/files/pdf-text-child.ts` from a checkout, and as
 * `mnemo __pdf-text-child` from the compiled binary (a binary runs only its main entry).
 */
import { writeSync } from "node:fs";
import type { PdfChildAnswer, PdfTextBudget } from "./pdf-text-protocol";

type PageReader = ReadableStreamDefaultReader<{ items: Array<{ str?: string; hasEOL?: boolean }> }>;

/** The text of `bytes`, page by page, stopping at the first limit it passes (time counts from `startedAt`). */
export async function readPdfText(
  bytes: Uint8Array,
  limits: PdfTextBudget,
  startedAt = performance.now(),
): Promise<{ answer: PdfChildAnswer; text: string }> {
  const { getDocumentProxy } = await import("unpdf");
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    pdf = await getDocumentProxy(bytes, { verbosity: 0 });
  } catch (error) {
    return { answer: { ok: false, reason: "unreadable", detail: (error as Error).message }, text: "" };
  }
  if (pdf.numPages > limits.maxPages)
    return { answer: { ok: false, reason: "too_many_pages", detail: `${pdf.numPages} pages` }, text: "" };
  const pages: string[] = [];
  // Pages are joined by a blank line: count those bytes too.
  let textBytes = 0;
  for (let number = 1; number <= pdf.numPages; number++) {
    const page = await pdf.getPage(number);
    // Streamed, not getTextContent(): pdf.js hands text over in chunks as it parses, so a
    // content stream that inflates to gigabytes is stopped at the cap, not held whole.
    const reader = page.streamTextContent().getReader() as PageReader;
    const parts: string[] = [];
    textBytes += number > 1 ? 2 : 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const item of value.items) {
        if (item.str === undefined) continue;
        const piece = item.hasEOL ? `${item.str}\n` : item.str;
        parts.push(piece);
        textBytes += Buffer.byteLength(piece);
      }
      const over =
        textBytes > limits.maxTextBytes
          ? "text_too_large"
          : process.memoryUsage.rss() > limits.memoryBytes
            ? "memory_limit"
            : performance.now() - startedAt > limits.timeMs
              ? "time_limit"
              : null;
      if (over) {
        await reader.cancel(new Error(over));
        return { answer: { ok: false, reason: over, detail: `stopped on page ${number}` }, text: "" };
      }
    }
    pages.push(parts.join(""));
    page.cleanup();
  }
  const text = pages.join("\n\n");
  return { answer: { ok: true, pages: pdf.numPages, textBytes: Buffer.byteLength(text) }, text };
}

/** The child's whole life: request in, answer out, exit. */
export async function runPdfTextChild(): Promise<never> {
  let answering = false;
  const startedAt = performance.now();
  // pdf.js reports through console.log: stdout carries the answer only.
  console.log = console.info = console.warn = console.error;
  const input = new Uint8Array(await Bun.stdin.arrayBuffer());
  const newline = input.indexOf(10);
  let answer: PdfChildAnswer;
  let text = "";
  try {
    const limits = JSON.parse(new TextDecoder().decode(input.subarray(0, newline))) as PdfTextBudget;
    // Past its time the child answers and ends, even when no server is left to kill it.
    setTimeout(
      () => {
        if (answering) return;
        writeSync(1, `${JSON.stringify({ ok: false, reason: "time_limit" } satisfies PdfChildAnswer)}\n`);
        process.exit(0);
      },
      Math.max(0, limits.timeMs - (performance.now() - startedAt)),
    );
    ({ answer, text } = await readPdfText(input.subarray(newline + 1), limits, startedAt));
  } catch (error) {
    answer = { ok: false, reason: "unreadable", detail: (error as Error).message };
  }
  answering = true;
  await Bun.write(Bun.stdout, `${JSON.stringify(answer)}\n${answer.ok ? text : ""}`);
  process.exit(0);
}

if (import.meta.main) await runPdfTextChild();
