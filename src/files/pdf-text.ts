import { readFileSync } from "node:fs";
import { join } from "node:path";
import { childCommand } from "../lib/child-command";
import {
  PDF_TEXT_CHILD_COMMAND,
  type NotIndexedReason,
  type PdfChildAnswer,
  type PdfTextBudget,
} from "./pdf-text-protocol";

export type { PdfTextBudget } from "./pdf-text-protocol";

export type PdfTextResult =
  | { ok: true; text: string; pages: number }
  | { ok: false; reason: NotIndexedReason; detail?: string };

/** How often the child's resident memory is read while it works. */
const WATCH_EVERY_MS = 25;
/** Bytes of an answer's JSON line beyond which the child is not believed. */
const MAX_ANSWER_LINE = 64 * 1024;

/**
 * Bun's stdin sink may answer write/flush/end with a promise that rejects (EPIPE) when the
 * child is gone; one nobody awaits would be an unhandled rejection. Observed at once here,
 * still rejecting for the caller that awaits it.
 */
function observed<T>(result: T): T {
  if (result instanceof Promise) result.catch(() => {});
  return result;
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

/** Reads the answer: a JSON line, then `textBytes` bytes of text; null for anything else, and never more than the budget. */
async function readAnswer(
  stdout: ReadableStream<Uint8Array>,
  maxTextBytes: number,
): Promise<{ answer: PdfChildAnswer; text: string } | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let answer: PdfChildAnswer | null = null;
  let textStart = 0;
  for await (const chunk of stdout) {
    chunks.push(chunk);
    size += chunk.byteLength;
    if (!answer) {
      const newline = Buffer.concat(chunks, size).indexOf(10);
      if (newline < 0) {
        if (size > MAX_ANSWER_LINE) return null;
        continue;
      }
      answer = JSON.parse(Buffer.concat(chunks, size).subarray(0, newline).toString("utf8")) as PdfChildAnswer;
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
 * Extracts a PDF's text in a child process, within `budget`: the server's heap holds no
 * more than the bytes in transit and the capped text. `source` is streamed to the child.
 *
 * @throws when the child cannot be started, `source` fails, or `signal` aborts: nothing was
 *   learned about the file, and the caller may try again later.
 * @example
 * const result = await extractPdfText(blobs.read(id, size), PDF_TEXT_BUDGET);
 * if (!result.ok) log.warn("not indexed", { reason: result.reason });
 */
export async function extractPdfText(
  source: ReadableStream<Uint8Array>,
  budget: PdfTextBudget,
  signal?: AbortSignal,
): Promise<PdfTextResult> {
  signal?.throwIfAborted();
  // No environment: the child needs none, and the server's secrets stay with the server.
  const child = Bun.spawn(childCommand(PDF_TEXT_CHILD_COMMAND, join(import.meta.dir, "pdf-text-child.ts")), {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
    env: {},
  });
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
  let sourceError: unknown = null;
  const feed = async () => {
    const reader = source.getReader();
    try {
      await observed(child.stdin.write(`${JSON.stringify(budget)}\n`));
      for (;;) {
        let next: Awaited<ReturnType<typeof reader.read>>;
        try {
          next = await reader.read();
        } catch (error) {
          sourceError = error;
          return kill("no_answer");
        }
        if (next.done) break;
        await observed(child.stdin.write(next.value));
        await observed(child.stdin.flush());
      }
      await observed(child.stdin.end());
    } catch {
      // The child closed its stdin (it ended early): its answer or its exit says why.
    } finally {
      await reader.cancel().catch(() => {});
    }
  };
  try {
    const [, answered] = await Promise.all([feed(), readAnswer(child.stdout, budget.maxTextBytes).catch(() => null)]);
    if (!answered) kill("no_answer");
    await child.exited;
    if (killedFor === "aborted") throw new Error("PDF text extraction stopped");
    if (sourceError) throw sourceError;
    if (answered) {
      const { answer, text } = answered;
      return answer.ok
        ? { ok: true, text, pages: answer.pages }
        : { ok: false, reason: answer.reason, detail: answer.detail };
    }
    if (killedFor === "memory_limit" || killedFor === "time_limit") return { ok: false, reason: killedFor };
    return {
      ok: false,
      reason: "unreadable",
      detail: `the reader ended without an answer (${child.signalCode ?? `exit ${child.exitCode}`})`,
    };
  } finally {
    clearInterval(watch);
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}
