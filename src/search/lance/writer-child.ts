/**
 * The index writer's child process: every LanceDB write of the index (rows deleted and
 * added, tables created and dropped, their full-text indices made, compactions) and the
 * writer's look at a table's state run here, while the server's own connection only
 * reads. LanceDB keeps native memory for every table a process writes or inspects, and
 * gives it back to no close, renewed connection or `malloc_trim`
 * (`bun bench/many-users.ts`: 10,000 users' first writes took the writing server to about
 * 700 MB, against 180 MB restarted on the same data); a child ends when idle or after so
 * many tables, and the OS takes it all back.
 *
 * Started as `bun src/search/lance/writer-child.ts` from a checkout, and as
 * `mnemo __index-writer` from the compiled binary; protocol in
 * src/shared/index-child-protocol.ts, the server's side in writer-child-process.ts.
 */
import { childErrorLine, runAsChildMain } from "../../lib/child-command";
import type * as lancedb from "@lancedb/lancedb";
import { tableFromIPC } from "apache-arrow";
import type { AddedRows, WriterChildAnswer, WriterChildRequest } from "../../shared/index-child-protocol";
import { ByteQueue } from "./byte-queue";
import { unreadableTables } from "./damaged-tables";
import { whereSourceKeys } from "./filters";
import { fullTextIndex, itemsSchema, TEXT_COLUMNS, vectorSchema } from "./lance-schema";
import { isMissing } from "./table-handles";

/** Handles kept open between requests (a batch writes each table once; an ingest writes a few many times). */
const MAX_OPEN = 64;
/** A header longer than this is not one the server sends (the longest names a batch's delete keys). */
const MAX_HEADER_BYTES = 64 * 1024 * 1024;

type Request = WriterChildRequest;
type Done = Omit<Extract<WriterChildAnswer, { ok: true }>, "id" | "ok">;

class Writer {
  private readonly open = new Map<string, lancedb.Table>();
  /** Full-text indices known to exist per table: the text column's, or all three. */
  private readonly fullText = new Map<string, "text" | "context">();

  constructor(
    private readonly db: lancedb.Connection,
    /** A new connection to the index, for work whose memory LanceDB keeps until its connection closes. */
    private readonly connect: () => Promise<lancedb.Connection>,
  ) {}

  async handle(request: Request, payload: Uint8Array): Promise<Done> {
    if (request.op === "tidiness") return { tidiness: await this.tidiness(request.table) };
    if (request.op === "check") return { damaged: await this.withOwnConnection(unreadableTables) };
    if (request.op === "optimize") {
      await this.optimize(request.tables, request.keepMs);
      return {};
    }
    if (request.op !== "replace") throw new Error(`unexpected request '${request.op}'`);
    const rows = payload.length ? payload : null;
    const name = request.table;
    let table = await this.table(name);
    let created = false;
    if (!table) {
      if (!rows) return { created: false, dropped: false };
      const schema = request.schema === "items" ? itemsSchema() : vectorSchema(request.schema);
      // Stable row ids: a row keeps its id when compaction moves it (row-keys.ts says why).
      table = await this.db.createEmptyTable(name, schema, {
        existOk: true,
        storageOptions: { new_table_enable_stable_row_ids: "true" },
      });
      this.fullText.delete(name);
      this.keep(name, table);
      created = true;
    }
    if (rows && request.schema === "items") await this.ensureFullText(name, table, request.context);
    if (request.deleteKeys.length) await table.delete(whereSourceKeys(request.deleteKeys));
    if (rows) {
      await addIpc(table, rows);
      return { created, dropped: false, ...(request.keys ? { added: await addedRows(table, request.keys) } : {}) };
    }
    // A partition holds only live items: the table goes with its last row.
    if ((await table.countRows()) > 0) return { created, dropped: false };
    this.forget(name);
    await this.db.dropTable(name).catch((error) => {
      if (!isMissing(error)) throw error;
    });
    return { created, dropped: true };
  }

  /**
   * The full-text indices a table needs: the text column's always, the two context
   * columns' only once the table holds context (most owners' tables never do).
   */
  private async ensureFullText(name: string, table: lancedb.Table, context: boolean): Promise<void> {
    const ready = this.fullText.get(name);
    if (ready === "context" || (ready === "text" && !context)) return;
    const indexed = new Set((await table.listIndices()).flatMap((index) => index.columns));
    for (const column of context ? TEXT_COLUMNS : TEXT_COLUMNS.slice(0, 1)) {
      if (!indexed.has(column)) await table.createIndex(column, { config: fullTextIndex() });
      indexed.add(column);
    }
    this.fullText.set(name, TEXT_COLUMNS.every((column) => indexed.has(column)) ? "context" : "text");
  }

  /**
   * Compacts tables and folds their new rows into their indices, removing versions older
   * than `keepMs`, through a connection of its own closed afterwards: LanceDB keeps memory
   * for every full-text index update on the connection that made it until that connection
   * closes (`bun bench/lance-fts-leak.ts`). Here rather than in a process of its own, which
   * cost a start and a load of LanceDB (0.1–0.3 s of CPU) for each compaction. The handles
   * kept for writes move to the new versions at their next use (`table`).
   */
  private async optimize(names: string[], keepMs: number): Promise<void> {
    const cleanupOlderThan = new Date(Date.now() - keepMs);
    await this.withOwnConnection(async (db) => {
      for (const name of names) {
        const table = await db.openTable(name).catch((error: Error) => {
          // A table dropped since it was named (its owner deleted everything) has nothing to compact.
          if (isMissing(error)) return null;
          throw error;
        });
        if (!table) continue;
        try {
          await table.optimize({ cleanupOlderThan });
        } finally {
          table.close();
        }
      }
    });
  }

  /** Work through a connection opened for it and closed after: what LanceDB keeps on it goes with it. */
  private async withOwnConnection<T>(work: (db: lancedb.Connection) => Promise<T>): Promise<T> {
    const db = await this.connect();
    try {
      return await work(db);
    } finally {
      db.close();
    }
  }

  private async tidiness(name: string): Promise<{ fragments: number; unindexedRows: number } | null> {
    const table = await this.table(name);
    if (!table) return null;
    const fragments = (await table.stats()).fragmentStats.numFragments;
    const index = (await table.listIndices()).find((candidate) => candidate.columns.includes(TEXT_COLUMNS[0]));
    const unindexedRows = index
      ? ((await table.indexStats(index.name))?.numUnindexedRows ?? 0)
      : await table.countRows();
    return { fragments, unindexedRows };
  }

  /**
   * A table at its newest version (the server compacts, rewrites and drops tables itself),
   * or null when there is none.
   */
  private async table(name: string): Promise<lancedb.Table | null> {
    const cached = this.open.get(name);
    if (cached) {
      this.open.delete(name);
      try {
        await cached.checkoutLatest();
        this.open.set(name, cached);
        return cached;
      } catch {
        // Dropped (and maybe made again) by the server: opened afresh below.
        cached.close();
        this.fullText.delete(name);
      }
    }
    try {
      const table = await this.db.openTable(name);
      this.keep(name, table);
      return table;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  private keep(name: string, table: lancedb.Table): void {
    this.open.set(name, table);
    while (this.open.size > MAX_OPEN) {
      const [oldest, handle] = this.open.entries().next().value!;
      this.open.delete(oldest);
      handle.close();
    }
  }

  private forget(name: string): void {
    this.open.get(name)?.close();
    this.open.delete(name);
    this.fullText.delete(name);
  }

  close(): void {
    for (const table of this.open.values()) table.close();
    this.open.clear();
    this.db.close();
  }
}

/**
 * Adds rows sent as Arrow IPC (file format) to a table. LanceDB's `add` of an Arrow table
 * serializes it to just these bytes and hands them to its native side; given the bytes, the
 * child hands them on as they are (`inner.add`, the SDK's own next step) instead of
 * decoding and encoding them again: that round trip cost the child as much CPU as the write.
 * Should a LanceDB version lack it, the rows are decoded and added the documented way.
 */
async function addIpc(table: lancedb.Table, ipc: Uint8Array): Promise<void> {
  const inner = (table as unknown as { inner?: { add?: (buf: Buffer, mode: string) => Promise<unknown> } }).inner;
  if (typeof inner?.add === "function")
    await inner.add(Buffer.from(ipc.buffer, ipc.byteOffset, ipc.byteLength), "append");
  else await table.add(tableFromIPC(ipc));
}

/**
 * The row ids, addresses and item ids of the `count` rows just added: the last rows of
 * the table's version after the add (an append is a new fragment after every other, and a
 * scan reads fragments in order). Read here, where the rows were just written, so the
 * server's searches need not read them back (row-keys.ts); the server checks them against
 * the rows it sent and keeps nothing when they differ.
 */
async function addedRows(table: lancedb.Table, count: number): Promise<AddedRows> {
  const total = await table.countRows();
  // Taken by offset: a scan with an offset reads every row before it (6–12 against 3–5 ms
  // for 5 rows added to a 2,000-row table of 22 fragments, LanceDB 0.39, throwaway probe).
  const added = Math.min(count, total);
  const offsets = Array.from({ length: added }, (_, i) => total - added + i);
  const rows = (await table.takeOffsets(offsets).select(["_rowaddr", "item_id"]).withRowId().toArray()) as Array<{
    _rowid: number | bigint;
    _rowaddr: number | bigint;
    item_id: string;
  }>;
  return {
    rowIds: rows.map((row) => Number(row._rowid)),
    addresses: rows.map((row) => Number(row._rowaddr)),
    itemIds: rows.map((row) => row.item_id),
  };
}

/** Serves requests from stdin until it closes; one answer each, on stdout, in any order. */
export async function runWriterChild(): Promise<void> {
  let writer: Writer | null = null;
  const running = new Set<Promise<void>>();
  const answer = (message: WriterChildAnswer) => {
    const body = Buffer.from(JSON.stringify(message));
    const head = Buffer.alloc(4);
    head.writeUInt32LE(body.length, 0);
    process.stdout.write(Buffer.concat([head, body]));
  };
  const serve = async (request: Request, payload: Uint8Array) => {
    try {
      if (request.op === "open") {
        const lance = await import("@lancedb/lancedb");
        const { uri, storageOptions } = request.location;
        const connect = () => lance.connect(uri, { storageOptions });
        writer = new Writer(await connect(), connect);
        answer({ id: request.id, ok: true });
        return;
      }
      if (!writer) throw new Error("the child was not opened");
      answer({ id: request.id, ok: true, ...(await writer.handle(request, payload)) });
    } catch (error) {
      answer({ id: request.id, ok: false, error: childErrorLine(error) });
    }
  };
  const queue = new ByteQueue();
  let ended = false;
  for await (const chunk of Bun.stdin.stream()) {
    queue.push(chunk);
    while (queue.length >= 8) {
      const headerBytes = queue.uint32(0);
      const payloadBytes = queue.uint32(4);
      if (headerBytes > MAX_HEADER_BYTES) throw new Error("index writer child: request header too large");
      if (queue.length < 8 + headerBytes + payloadBytes) break;
      queue.take(8);
      const request = JSON.parse(new TextDecoder().decode(queue.take(headerBytes))) as Request;
      const payload = queue.take(payloadBytes);
      // The open comes first and alone; the writes after it run side by side (different tables).
      if (request.op === "end") ended = true;
      else if (request.op === "open") await serve(request, payload);
      else {
        const done: Promise<void> = serve(request, payload).finally(() => running.delete(done));
        running.add(done);
      }
    }
  }
  // Closed without `end`: the server is gone (protocol: index-child-protocol.ts). Nothing
  // more is committed; what it asked and did not see answered, its successor replays.
  if (!ended) process.exit(0);
  await Promise.all(running);
  (writer as Writer | null)?.close();
}

if (import.meta.main) await runAsChildMain(runWriterChild);
