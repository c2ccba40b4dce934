import type { Settings } from "../../db/leases";
import type { Executor } from "../../db/store";
import type { Logger } from "../../lib/log";
import type { IndexOutbox } from "./outbox-repository";

/**
 * Past this age, a change still waiting for the full-text index means the index is not
 * catching up. Any replica (and `mnemo doctor`) sees it in the outbox: a batch normally
 * waits at most a quarter of a second.
 */
export const INDEX_BEHIND_MS = 30_000;
/** Settings key where the writer records an ongoing outage, so other replicas and `mnemo doctor` can name its cause. */
export const INDEX_FAILURE_KEY = "index_write_failure";

/** Whether new records become searchable: `behind` when old changes wait, `failing` when the writer's writes fail. */
export type IndexStatus = "ok" | "behind" | "failing";

/** An ongoing run of failed index writes. */
export interface IndexFailure {
  /** When the first failure of the run happened (ISO). */
  since: string;
  /** When the latest one happened (ISO). */
  lastAt: string;
  /** The latest failure, on one line. */
  reason: string;
  /** Failed attempts in a row (one a second while it lasts). */
  failures: number;
  /** The lease holder id of the writer that fails. */
  holder: string;
}

/** The message on one line, without LanceDB's Rust source locations and its causes (they repeat the message). */
function oneLine(error: unknown): string {
  const text = (error instanceof Error ? error.message : String(error)).split(/\s*Caused by:/)[0];
  return text
    .replace(/,\s*\S+\.rs:\d+:\d+/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 300);
}

/**
 * The index writer's memory of its last write failure: a warning when an outage starts
 * (not one per retry, which would flood the log), an info line when a batch lands again.
 * The outage is also recorded in the store of record for the other replicas.
 */
export class WriteFailures {
  private current: IndexFailure | null = null;

  constructor(
    private readonly o: { log: Logger; outbox: IndexOutbox; settings: Settings; db: Executor; holder: string },
  ) {}

  get failure(): IndexFailure | null {
    return this.current;
  }

  /** A drain failed: counted; the first of an outage is logged and recorded. */
  failed(error: unknown): void {
    const now = new Date().toISOString();
    const reason = oneLine(error);
    this.o.log.debug("index write failed; retrying in 1s", { error });
    if (this.current) {
      const changed = reason !== this.current.reason;
      this.current = { ...this.current, lastAt: now, reason, failures: this.current.failures + 1 };
      if (changed) void this.publish(JSON.stringify(this.current));
      return;
    }
    this.current = { since: now, lastAt: now, reason, failures: 1, holder: this.o.holder };
    this.o.log.warn(
      "search index writes fail; records are kept and become searchable once writes succeed (retrying every 1s)",
      { reason },
    );
    void this.publish(JSON.stringify(this.current));
  }

  /** Writes succeeded: an outage ends, with how long it lasted and how many changes waited. */
  async landed(rows: number): Promise<void> {
    const ended = this.current;
    if (!ended) return;
    this.current = null;
    const waiting = rows + (await this.o.outbox.counts().catch(() => ({ text: 0 }))).text;
    const seconds = Math.round((Date.now() - Date.parse(ended.since)) / 1000);
    this.o.log.info("search index writes recovered", { lastedSeconds: seconds, failures: ended.failures, waiting });
    await this.publish("");
  }

  /** A new writer starts clean: a record left by a previous one (which may have died failing) goes. */
  async reset(): Promise<void> {
    this.current = null;
    // Read first: most starts find none, and a write would wait for a commit on the start path.
    const recorded = await this.o.settings.get(this.o.db, INDEX_FAILURE_KEY).catch(() => "unknown");
    if (recorded) await this.publish("");
  }

  private async publish(value: string): Promise<void> {
    // The store may be what fails: the local state still answers `/health`.
    await this.o.settings.set(this.o.db, INDEX_FAILURE_KEY, value).catch(() => {});
  }
}

/** A recorded outage from the settings value (empty or unreadable: none). */
export function parseIndexFailure(value: string | null): IndexFailure | null {
  if (!value) return null;
  try {
    return JSON.parse(value) as IndexFailure;
  } catch {
    return null;
  }
}

/**
 * The index's state as any process sees it: `failing` with a failure of this process
 * (when it writes) or one the live writer recorded while changes wait; `behind` when the
 * oldest waiting change is older than INDEX_BEHIND_MS; otherwise `ok`.
 */
export function indexStatus(input: {
  own: IndexFailure | null;
  recorded: IndexFailure | null;
  writerId: string | null;
  pendingText: number;
  oldestPendingAgeMs: number | null;
}): { status: IndexStatus; failure: IndexFailure | null } {
  const recorded =
    input.recorded && input.recorded.holder === input.writerId && input.pendingText > 0 ? input.recorded : null;
  const failure = input.own ?? recorded;
  if (failure) return { status: "failing", failure };
  return { status: (input.oldestPendingAgeMs ?? 0) > INDEX_BEHIND_MS ? "behind" : "ok", failure: null };
}
