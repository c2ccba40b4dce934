import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PDF_TEXT_CHILD_COMMAND, type NotIndexedReason, type PdfChildAnswer, type PdfChildLimits } from "./pdf-text-protocol";

/** What the child may spend on one PDF; beyond it the file is stored, not indexed. */
export interface PdfTextBudget extends PdfChildLimits {
  /** The child is killed after this long. */
  timeMs: number;
}

export type PdfTextResult = { ok: true; text: string; pages: number } | { ok: false; reason: NotIndexedReason; detail?: string };

/** How often the child's resident memory is read while it works. */
const WATCH_EVERY_MS = 25;
/** Bytes of an answer's JSON line beyond which the child is not believed. */
const MAX_ANSWER_LINE = 64 * 1024;

/**
 * The command that starts the child: this very binary with a hidden command when compiled
 * (a binary runs only its main entry; `mnemo` dispatches it), the module itself otherwise.
 */
function childCommand(): string[] {
  if (Bun.isStandaloneExecutable) return [process.execPath, PDF_TEXT_CHILD_COMMAND];
  return [process.execPath, join(import.meta.dir, "pdf-text-child.ts")];
}

/** A process's resident memory from /proc, or null where there is none (the child then watches itself). */
function residentBytes(pid: number): number | null {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}

/** Reads the answer: a JSON line, then `textBytes` bytes of text; never more than the budget allows. */
async function readAnswer(stdout: ReadableStream<Uint8Array>, maxTextBytes: number): Promise<{ answer: PdfChildAnswer; text: string } | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let answer: PdfChildAnswer | null = null;
  let textStart = 0;
  for await (const chunk of stdout) {
    chunks.push(chunk);
    size += chunk.byteLength;
    if (!answer) {
      const joined = Buffer.concat(chunks, size);
      const newline = joined.indexOf(10);
      if (newline < 0) {
        if (size > MAX_ANSWER_LINE) return null;
        continue;
      }
      answer = JSON.parse(joined.subarray(0, newline).toString("utf8")) as PdfChildAnswer;
      if (answer.ok && answer.textBytes > maxTextBytes) return null;
      textStart = newline + 1;
    }
    if (size - textStart > (answer.ok ? answer.textBytes : 0)) return null;
  }
  if (!answer) return null;
  const body = Buffer.concat(chunks, size).subarray(textStart);
  if (answer.ok && body.byteLength !== answer.textBytes) return null;
  return { answer, text: answer.ok ? body.toString("utf8") : "" };
}

/**
 * Extracts a PDF's text in a child process, within `budget`: the server's heap never holds
 * more than the PDF's bytes in transit and the capped text. `source` is streamed to the
 * child. Aborting `signal` kills the child and rejects.
 *
 * @throws when the child cannot be started or `signal` aborts (the caller may try again later).
 * @example
 * const result = await extractPdfText(blobs.read(id, size), { maxPages: 2000, maxTextBytes: 5 << 20, memoryBytes: 512 << 20, timeMs: 60_000 });
 */
export async function extractPdfText(source: ReadableStream<Uint8Array>, budget: PdfTextBudget, signal?: AbortSignal): Promise<PdfTextResult> {
  signal?.throwIfAborted();
  // No environment: the child needs none, and the server's secrets stay with the server.
  const child = Bun.spawn(childCommand(), { stdin: "pipe", stdout: "pipe", stderr: "ignore", env: {} });
  let killedFor: "memory_limit" | "time_limit" | "aborted" | "no_answer" | null = null;
  const kill = (why: NonNullable<typeof killedFor>) => {
    killedFor ??= why;
    child.kill("SIGKILL");
  };
  const watch = setInterval(() => {
    const rss = residentBytes(child.pid);
    if (rss !== null && rss > budget.memoryBytes) kill("memory_limit");
  }, WATCH_EVERY_MS);
  const timer = setTimeout(() => kill("time_limit"), budget.timeMs);
  const onAbort = () => kill("aborted");
  signal?.addEventListener("abort", onAbort);
  try {
    const limits: PdfChildLimits = { maxPages: budget.maxPages, maxTextBytes: budget.maxTextBytes, memoryBytes: budget.memoryBytes };
    const feeding = (async () => {
      child.stdin.write(`${JSON.stringify(limits)}\n`);
      for await (const chunk of source) {
        child.stdin.write(chunk);
        await child.stdin.flush();
      }
      await child.stdin.end();
    })().catch(() => {}); // a child that died early closed its stdin: its exit says why
    const answered = await readAnswer(child.stdout, budget.maxTextBytes).catch(() => null);
    if (!answered) kill("no_answer");
    await Promise.all([feeding, child.exited]);
    if (killedFor === "aborted") throw new Error("PDF text extraction stopped");
    if (answered) {
      const { answer, text } = answered;
      return answer.ok ? { ok: true, text, pages: answer.pages } : { ok: false, reason: answer.reason, detail: answer.detail };
    }
    if (killedFor === "memory_limit" || killedFor === "time_limit") return { ok: false, reason: killedFor };
    return { ok: false, reason: "unreadable", detail: `the extractor ended without an answer (exit ${child.exitCode ?? child.signalCode})` };
  } finally {
    clearInterval(watch);
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}
