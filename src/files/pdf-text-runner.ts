import type { BlobStore } from "../blobs/store";
import type { Store } from "../db/store";
import type { Logger } from "../lib/log";
import type { Scheduler } from "../lib/scheduler";
import type { Outbox } from "../search";
import { extractPdfText, type PdfTextBudget, type PdfTextResult } from "./pdf-text";
import { roundRobin, type PendingPdf } from "./pdf-text-queue-repository";
import type { FileRepository } from "./repository";
import { MAX_PDF_BYTES, PDF_TEXT_BUDGET, splitBlocks } from "./text";

export interface PdfTextRunnerDeps {
  repo: FileRepository;
  blobs: BlobStore;
  store: Store;
  outbox: Outbox;
  log: Logger;
  /** Runs the passes: none starts once it stops, and its `stop` waits for the one under way. */
  scheduler: Scheduler;
  /** What one PDF may cost (default PDF_TEXT_BUDGET). */
  budget?: PdfTextBudget;
}

/** A claim outlives the time budget by this much: the claimer had time to record its result. */
const CLAIM_MARGIN_MS = 60_000;

/**
 * Reads the text of pending PDFs, one at a time, round robin between their owners
 * (pdf-text-queue-repository.ts), each in a child process within the budget
 * (src/files/pdf-text.ts), then stores the blocks and queues the file for the index in one
 * transaction, or records why it is not indexed. Pending files are found in the store of
 * record, so a file whose reading was cut short (a restart) is read at the next `start`.
 * Several processes on one store share the work through per-file claims.
 *
 * One owner loop, run by the scheduler: `wake` asks for a pass (an upload left a file
 * pending), `stop` kills the child at work and waits for the pass to end; nothing runs
 * after it (nor after the scheduler stopped).
 */
export function createPdfTextRunner(d: PdfTextRunnerDeps) {
  const budget = d.budget ?? PDF_TEXT_BUDGET;
  let started = false;
  let stopped = false;
  let again = false;
  /** A pass is scheduled or under way: a `wake` meanwhile asks for one more after it. */
  let busy = false;
  let running: Promise<void> | null = null;
  const abort = new AbortController();

  async function readText(file: PendingPdf): Promise<PdfTextResult> {
    if (file.size > MAX_PDF_BYTES) return { ok: false, reason: "file_too_large" };
    return extractPdfText(d.blobs.read(file.blobId, file.size), budget, abort.signal);
  }

  /** Reads and records one pending file, unless another process holds it. */
  async function handle(file: PendingPdf): Promise<void> {
    const now = Date.now();
    if (!(await d.repo.claimPendingText(d.store.db, file.key, file.blobId, now, now + budget.timeMs + CLAIM_MARGIN_MS)))
      return;
    let result: PdfTextResult;
    try {
      result = await readText(file);
    } catch (error) {
      await d.repo.releaseTextClaim(d.store.db, file.key, file.blobId).catch(() => {});
      if (!stopped)
        d.log.warn("file text not read; trying again at the next upload or start", {
          key: file.key,
          error: (error as Error).message,
        });
      return;
    }
    const blocks = result.ok ? splitBlocks(result.text) : [];
    const recorded = await d.store.transaction(async (tx) => {
      // The bytes may have been replaced or the file deleted meanwhile: then this result is stale.
      if (
        !(await d.repo.setTextState(
          tx,
          file.key,
          file.blobId,
          result.ok ? "indexed" : "not_indexed",
          result.ok ? null : result.reason,
        ))
      )
        return false;
      await d.repo.setBlocks(tx, file.ownerId, file.key, blocks);
      await d.outbox.enqueue(tx, { ownerId: file.ownerId, kind: "file", sourceId: file.key }, "sync");
      return true;
    });
    // One line per file, its key and the reason: never its name or text.
    if (recorded && !result.ok)
      d.log.warn("file stored, its text not indexed", { key: file.key, reason: result.reason, detail: result.detail });
  }

  async function pass(): Promise<void> {
    const order = roundRobin();
    while (!stopped) {
      const file = await order.next(d.store.db);
      if (!file) return;
      await handle(file);
    }
  }

  function kick(): void {
    if (!started || stopped) return;
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    d.scheduler.after(0, "pdf-text", () => {
      running = (async () => {
        do {
          again = false;
          await pass().catch((error) =>
            d.log.warn("reading PDF text failed; trying again at the next upload or start", {
              error: (error as Error).message,
            }),
          );
        } while (again && !stopped);
      })().finally(() => {
        running = null;
        busy = false;
      });
      return running;
    });
  }

  return {
    /** Reads what is pending now, and from then on what `wake` announces. */
    start(): void {
      started = true;
      kick();
    },
    /** A file was left pending: read it (after the pass under way, if any). */
    wake: kick,
    async stop(): Promise<void> {
      stopped = true;
      abort.abort();
      await running;
    },
  };
}
export type PdfTextRunner = ReturnType<typeof createPdfTextRunner>;
