import type { Subprocess } from "bun";
import { join } from "node:path";
import { type Table, tableToIPC } from "apache-arrow";
import { childCommand } from "../../lib/child-command";
import type { ScheduledTask, Scheduler } from "../../lib/scheduler";
import {
  INDEX_WRITER_COMMAND,
  type IndexChildLocation,
  type WriterChildAnswer,
  type WriterChildRequest,
} from "../../shared/index-child-protocol";
import { ByteQueue } from "./byte-queue";

/** A child ends after this long without a request: what LanceDB kept in it goes back to the OS. */
const IDLE_MS = 5_000;
/** A child that wrote to this many tables is replaced at the next new one (LanceDB keeps ~50 KB for each). */
const RECYCLE_AFTER_TABLES = 1_000;
/** How long `stop` waits for a child to finish what it was asked before killing it. */
const STOP_WAIT_MS = 10_000;

type Ask = WriterChildRequest extends infer R ? (R extends unknown ? Omit<R, "id"> : never) : never;
type Done = Extract<WriterChildAnswer, { ok: true }>;

interface Child {
  process: Subprocess<"pipe", "pipe", "pipe">;
  pending: Map<number, { resolve(answer: Done): void; reject(error: Error): void }>;
  /** Tables it was asked about. */
  tables: Set<string>;
  /** Its `open`, answered. */
  opened: Promise<unknown>;
  /** It opened every table (a `check`): the next request goes to a new child. */
  spent: boolean;
}

/**
 * The server's side of the index writer's child process (writer-child.ts says why it
 * exists): started at the first write, ended when idle or once it touched so many tables,
 * and started again at the next write. A request whose child ended before answering
 * rejects: the index writer retries its batch as after any failed write.
 */
export class WriterChild {
  private current: Child | null = null;
  private nextId = 1;
  private idle: ScheduledTask | null = null;
  /** Children asked to end, until they have. */
  private readonly ending = new Set<Child>();
  /** Children started so far, for tests. */
  started = 0;

  constructor(
    private readonly location: IndexChildLocation,
    private readonly scheduler: Scheduler,
    /** Where the child is registered while it runs, for whoever kills every child. */
    private readonly running: Set<{ kill(): void }>,
  ) {}

  /**
   * Replaces rows in a table (see the protocol's `replace`); `keys`: answer the added rows'
   * ids, addresses and item ids too.
   */
  async replace(
    table: string,
    schema: "items" | number,
    deleteKeys: string[],
    context: boolean,
    rows: Table | null,
    keys = false,
  ): Promise<{ created: boolean; dropped: boolean; added: Done["added"] }> {
    // The file format: what LanceDB's own `add` makes of an Arrow table (writer-child.ts `addIpc`).
    const payload = rows ? tableToIPC(rows, "file") : new Uint8Array(0);
    const request = { op: "replace", table, schema, deleteKeys, context } as const;
    const done = await this.ask(keys && rows ? { ...request, keys: rows.numRows } : request, [table], payload);
    return { created: Boolean(done.created), dropped: Boolean(done.dropped), added: done.added };
  }

  /** A table's fragments and the rows its text column's full-text index does not cover (null: no such table). */
  async tidiness(table: string): Promise<{ fragments: number; unindexedRows: number } | null> {
    return (await this.ask({ op: "tidiness", table }, [table])).tidiness ?? null;
  }

  /**
   * Tables that exist but cannot be read (damaged-tables.ts), checked by the child: what
   * LanceDB keeps for every table it opens (about 6 KB each; 60 MB at 10,000 tables) goes
   * with that child, not into the server.
   */
  async unreadableTables(): Promise<Array<{ name: string; reason: string }>> {
    return (await this.ask({ op: "check" }, [], new Uint8Array(0), true)).damaged ?? [];
  }

  /** Compacts tables and brings their indices up to date, removing versions older than `keepMs` (writer-child.ts `optimize`). */
  async optimize(tables: string[], keepMs: number): Promise<void> {
    try {
      await this.ask({ op: "optimize", tables, keepMs }, tables);
    } catch (error) {
      throw new Error(`compacting index tables failed: ${(error as Error).message}`);
    }
  }

  /** Ends the child (what it was asked is finished first; a stuck one is killed). */
  async stop(): Promise<void> {
    this.idle?.cancel();
    this.idle = null;
    if (this.current) this.end(this.current);
    await Promise.all(
      [...this.ending].map(async (child) => {
        const timer = setTimeout(() => child.process.kill(), STOP_WAIT_MS);
        await child.process.exited;
        clearTimeout(timer);
      }),
    );
  }

  /**
   * Sends a request about `tables` to the current child (a new one when there is none, when
   * it touched enough tables, or when it is spent); `spends`: it is spent once answered.
   */
  private async ask(
    request: Ask,
    tables: string[],
    payload: Uint8Array = new Uint8Array(0),
    spends = false,
  ): Promise<Done> {
    this.idle?.cancel();
    this.idle = null;
    let child = this.current;
    const full = (c: Child) => tables.some((table) => !c.tables.has(table)) && c.tables.size >= RECYCLE_AFTER_TABLES;
    if (child && (child.spent || full(child))) {
      this.end(child);
      child = null;
    }
    child ??= this.current = this.spawn();
    for (const table of tables) child.tables.add(table);
    const answered = this.send(child, request, payload);
    // Seen below, or its child's failure to open is what the caller gets.
    answered.catch(() => {});
    try {
      await child.opened;
      const done = await answered;
      if (spends) child.spent = true;
      return done;
    } finally {
      if (this.current === child && child.pending.size === 0) this.idleLater(child);
    }
  }

  private idleLater(child: Child): void {
    this.idle = this.scheduler.after(IDLE_MS, "end the index writer's child", () => {
      this.idle = null;
      if (this.current === child && child.pending.size === 0) this.end(child);
    });
  }

  private spawn(): Child {
    this.started++;
    // No environment, as the other children: what it needs comes in its first request.
    const process = Bun.spawn(childCommand(INDEX_WRITER_COMMAND, join(import.meta.dir, "writer-child.ts")), {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      env: {},
    });
    const handle = { kill: () => process.kill() };
    this.running.add(handle);
    const child: Child = {
      process,
      pending: new Map(),
      tables: new Set(),
      opened: Promise.resolve(),
      spent: false,
    };
    const stderr = new Response(process.stderr).text().catch(() => "");
    // Once its stdout ends (every answer it gave was read), what is still waiting fails.
    void this.readAnswers(child).then(async () => {
      this.running.delete(handle);
      this.ending.delete(child);
      if (this.current === child) this.current = null;
      const code = await process.exited;
      const reason = (await stderr).trim().slice(0, 300) || `exit ${code}`;
      for (const { reject } of child.pending.values())
        reject(new Error(`the index writer's child process ended: ${reason}`));
      child.pending.clear();
    });
    child.opened = this.send(child, { op: "open", location: this.location }, new Uint8Array(0));
    // Its failure reaches every request through their own answers.
    child.opened.catch(() => {});
    return child;
  }

  private send(child: Child, request: Ask, payload: Uint8Array): Promise<Done> {
    const id = this.nextId++;
    const answered = new Promise<Done>((resolve, reject) => child.pending.set(id, { resolve, reject }));
    try {
      this.announce(child, { ...request, id } as WriterChildRequest, payload);
    } catch (error) {
      child.pending.get(id)?.reject(error as Error);
      child.pending.delete(id);
    }
    return answered;
  }

  /** Writes one frame: the lengths, the JSON header, the payload. */
  private announce(child: Child, request: WriterChildRequest, payload: Uint8Array = new Uint8Array(0)): void {
    const header = Buffer.from(JSON.stringify(request));
    const lengths = Buffer.alloc(8);
    lengths.writeUInt32LE(header.length, 0);
    lengths.writeUInt32LE(payload.length, 4);
    child.process.stdin.write(lengths);
    child.process.stdin.write(header);
    if (payload.length) child.process.stdin.write(payload);
    child.process.stdin.flush();
  }

  private async readAnswers(child: Child): Promise<void> {
    const queue = new ByteQueue();
    try {
      for await (const chunk of child.process.stdout) {
        queue.push(chunk);
        while (queue.length >= 4 && queue.length >= 4 + queue.uint32(0)) {
          const length = queue.uint32(0);
          queue.take(4);
          const answer = JSON.parse(new TextDecoder().decode(queue.take(length))) as WriterChildAnswer;
          const waiting = child.pending.get(answer.id);
          child.pending.delete(answer.id);
          if (!waiting) continue;
          if (answer.ok) waiting.resolve(answer);
          else waiting.reject(new Error(answer.error));
        }
      }
    } catch {
      // The pipe broke: the child is gone, and its pending requests fail below.
    }
  }

  /** Asks a child to end once it has answered what it was asked (a close without `end` would make it drop that). */
  private end(child: Child): void {
    if (this.current === child) this.current = null;
    this.ending.add(child);
    try {
      this.announce(child, { op: "end", id: this.nextId++ });
      child.process.stdin.end();
    } catch {
      // Already gone.
    }
  }
}
