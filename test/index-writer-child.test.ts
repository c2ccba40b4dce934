import { afterAll, describe, expect, test } from "bun:test";
import * as lancedb from "@lancedb/lancedb";
import { tableToIPC } from "apache-arrow";
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rowsTable } from "../src/search/lance/arrow-write";
import { itemsSchema, WORD_VECTOR_DIMS } from "../src/search/lance/lance-schema";
import { isMissing } from "../src/search/lance/table-handles";
import type { OutboxRow } from "../src/search/indexing/outbox-repository";
import { Replays } from "../src/search/indexing/replays";
import { duplicates, indexRows } from "./helpers/index-rows";
import { mock, startTestServer, tempDir, type TestServer } from "./helpers/server";
import { processStat } from "./helpers/processes";
import { waitFor } from "./helpers/wait";

const servers: TestServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.destroy();
});

/** Pids of this process's index-writer children (the test server runs in this process). */
function writerChildren(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = processStat(entry);
      // A zombie (ended, not yet reaped) is gone for this test's purpose.
      if (stat?.ppid !== process.pid || stat.state === "Z") continue;
      const command = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (command.includes("writer-child") || command.includes("__index-writer")) found.push(Number(entry));
    } catch {
      // Ended meanwhile.
    }
  }
  return found;
}

async function remember(server: TestServer, user: string, content: string) {
  const [status] = await server.call("POST", "/v1/memories", { token: mock(user), body: { content } });
  expect(status).toBe(201);
}

async function found(server: TestServer, user: string, query: string): Promise<string[]> {
  const [status, body] = await server.call("POST", "/v1/memories/search", {
    token: mock(user),
    body: { query, signals: ["text"], limit: 100 },
  });
  expect(status).toBe(200);
  return (body.results as Array<{ content: string }>).map((r) => r.content);
}

describe("the index writer's child process", () => {
  test("makes the index's writes, ends once idle (handing its memory back), and comes back at the next write", async () => {
    const server = await startTestServer();
    servers.push(server);
    await remember(server, "ada", "the lighthouse keeper logs the tide");
    await server.services.indexer.drain();
    expect(writerChildren()).toHaveLength(1);
    // Indexed, not pending: found through the table the child wrote.
    expect((await server.call("GET", "/health", { token: mock("ada") }))[1].index.pending).toBe(0);
    expect(await found(server, "ada", "lighthouse tide")).toEqual(["the lighthouse keeper logs the tide"]);
    await waitFor(() => writerChildren().length === 0, { what: "the idle writer child to end" });
    await remember(server, "ada", "the lighthouse lamp was polished");
    await server.services.indexer.drain();
    expect(writerChildren()).toHaveLength(1);
    expect((await found(server, "ada", "lighthouse")).sort()).toEqual([
      "the lighthouse keeper logs the tide",
      "the lighthouse lamp was polished",
    ]);
  }, 60_000);

  test("killed in the middle of an ingest: the writer retries in a new child, and no write is lost or doubled", async () => {
    const server = await startTestServer();
    servers.push(server);
    const texts = Array.from({ length: 60 }, (_, i) => `ferry manifest line ${i} zq${i}x`);
    await Promise.all(texts.slice(0, 30).map((text) => remember(server, "bo", text)));
    const [child] = await waitFor(() => (writerChildren().length ? writerChildren() : null), {
      what: "the writer child to start",
    });
    process.kill(child!, "SIGKILL");
    await Promise.all(texts.slice(30).map((text) => remember(server, "bo", text)));
    await server.services.indexer.drain();
    expect((await found(server, "bo", "ferry manifest")).sort()).toEqual([...texts].sort());
    for (const i of [0, 29, 30, 59]) expect(await found(server, "bo", `zq${i}x`)).toEqual([texts[i]]);
    // In the index once each: a replayed batch deleted what the killed child had added.
    const rows = (await indexRows(server.dataDir)).filter((row) => row.owner_id === "bo");
    expect(rows).toHaveLength(60);
    expect(duplicates(rows)).toEqual([]);
  }, 60_000);
});

describe("replays after a failed batch", () => {
  const row = (seq: number, sourceId: string, op = "insert") =>
    ({ seq, ownerId: "cy", kind: "memory", sourceId, op, stage: "text", attempts: 0 }) as unknown as OutboxRow;

  test("a batch that did not finish is deleted before it is added when taken again (its child may have committed before it ended); a finished one is not", () => {
    const replays = new Replays();
    replays.tookOver({ text: 10, vector: 10 });
    // New inserts above the takeover mark need no delete.
    expect(replays.plan([row(11, "a"), row(12, "b")], "text").deletes).toEqual([]);
    // That batch failed: taken again, both are replays.
    const again = replays.plan([row(11, "a"), row(12, "b"), row(13, "c")], "text");
    expect(again.deletes.map((ref) => ref.sourceId)).toEqual(["a", "b"]);
    replays.finished("text");
    expect(replays.plan([row(14, "d")], "text").deletes).toEqual([]);
    // The other stage keeps its own account: the text batch's failure made no vector row a replay.
    expect(replays.plan([row(11, "a")], "vector").deletes).toEqual([]);
    // A changed (or deleted) source is always deleted first.
    expect(replays.plan([row(15, "e", "sync")], "text").deletes.map((ref) => ref.sourceId)).toEqual(["e"]);
  });
});

describe("the writer child run directly, over its protocol", () => {
  /** The child run directly, speaking its protocol (index-child-protocol.ts) over pipes. */
  function startChild() {
    const child = Bun.spawn(
      [process.execPath, join(import.meta.dir, "..", "src", "search", "lance", "writer-child.ts")],
      {
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
        env: {},
      },
    );
    const frame = (request: object, payload: Uint8Array = new Uint8Array(0)) => {
      const header = Buffer.from(JSON.stringify(request));
      const lengths = Buffer.alloc(8);
      lengths.writeUInt32LE(header.length, 0);
      lengths.writeUInt32LE(payload.length, 4);
      child.stdin.write(lengths);
      child.stdin.write(header);
      if (payload.length) child.stdin.write(payload);
      child.stdin.flush();
    };
    const answers: Array<{ id: number; ok: boolean }> = [];
    const read = (async () => {
      let buffered = Buffer.alloc(0);
      for await (const chunk of child.stdout) {
        buffered = Buffer.concat([buffered, chunk]);
        while (buffered.length >= 4 && buffered.length >= 4 + buffered.readUInt32LE(0)) {
          answers.push(JSON.parse(buffered.subarray(4, 4 + buffered.readUInt32LE(0)).toString()));
          buffered = buffered.subarray(4 + buffered.readUInt32LE(0));
        }
      }
    })();
    let id = 0;
    /** Sends a request and waits for its answer, which must be ok. */
    const ask = async (request: object, payload?: Uint8Array) => {
      const mine = ++id;
      frame({ id: mine, ...request }, payload);
      const answer = await waitFor(() => answers.find((a) => a.id === mine), { what: `answer ${mine}` });
      expect(answer).toMatchObject({ ok: true });
      return answer as {
        tidiness?: { fragments: number; unindexedRows: number };
        damaged?: Array<{ name: string; reason: string }>;
      };
    };
    return { child, frame, answers, read, ask };
  }

  const rows = (n: number, from = 0) =>
    Array.from({ length: n }, (_, k) => from + k).map((i) => ({
      source_key: `memory|m${i}`,
      owner_id: "gone",
      kind: "memory",
      source_id: `m${i}`,
      item_id: `m${i}`,
      workspace_id: null,
      session_id: null,
      document_type: null,
      meta: [],
      created_at: i,
      text: `orphaned write ${i}`,
      context_before: "",
      context_after: "",
      wvec: new Float32Array(WORD_VECTOR_DIMS).fill(0.1),
    }));

  /** Rows committed to a table: none when it was never made, or when a child that exited at once left its directory without a first version. */
  async function rowsIn(dir: string, table: string): Promise<number> {
    const db = await lancedb.connect(dir);
    try {
      if (!(await db.tableNames()).includes(table)) return 0;
      const opened = await db.openTable(table).catch((error: Error) => {
        if (isMissing(error)) return null;
        throw error;
      });
      return opened ? await opened.countRows() : 0;
    } finally {
      db.close();
    }
  }

  test("a stdin closed after `end` finishes what was asked; closed without it (the server died), the child exits at once and commits nothing more", async () => {
    const dir = tempDir("mnemo-writer-orphan-");
    try {
      const payload = tableToIPC(await rowsTable(itemsSchema(), rows(50)), "file");
      for (const ended of [true, false]) {
        const table = ended ? "mem_ended" : "mem_orphaned";
        const { child, frame, answers, read } = startChild();
        frame({ id: 1, op: "open", location: { uri: dir } });
        await waitFor(() => answers.find((answer) => answer.id === 1), { what: "the child to open" });
        // Asked, and then the stdin closes: as the server ends a child, or as a server's death closes it.
        frame({ id: 2, op: "replace", table, schema: "items", deleteKeys: [], context: false }, payload);
        if (ended) frame({ op: "end" });
        child.stdin.end();
        expect(await child.exited).toBe(0);
        await read;
        expect(answers.map((answer) => [answer.id, answer.ok])).toEqual(
          ended
            ? [
                [1, true],
                [2, true],
              ]
            : [[1, true]],
        );
        expect(await rowsIn(dir, table)).toBe(ended ? 50 : 0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("compacts tables and folds their new rows into the full-text index; a table gone since it was named is skipped, and writes go on after", async () => {
    const dir = tempDir("mnemo-writer-optimize-");
    const { child, frame, read, ask } = startChild();
    const batch = async (from: number) => tableToIPC(await rowsTable(itemsSchema(), rows(40, from)), "file");
    const write = { op: "replace", table: "mem_tidy", schema: "items", deleteKeys: [], context: false };
    try {
      await ask({ op: "open", location: { uri: dir } });
      await ask(write, await batch(0));
      await ask(write, await batch(40));
      expect((await ask({ op: "tidiness", table: "mem_tidy" })).tidiness).toEqual({ fragments: 2, unindexedRows: 80 });
      await ask({ op: "optimize", tables: ["mem_tidy", "mem_never_made"], keepMs: 0 });
      expect((await ask({ op: "tidiness", table: "mem_tidy" })).tidiness).toEqual({ fragments: 1, unindexedRows: 0 });
      // The write handle the child keeps moved to the compacted version.
      await ask(write, await batch(80));
      expect((await ask({ op: "tidiness", table: "mem_tidy" })).tidiness).toEqual({ fragments: 2, unindexedRows: 40 });
      frame({ op: "end" });
      child.stdin.end();
      expect(await child.exited).toBe(0);
      await read;
      expect(await rowsIn(dir, "mem_tidy")).toBe(120);
    } finally {
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("checks that every table reads: a table whose files were spoilt is named with its error, a sound one is not", async () => {
    const dir = tempDir("mnemo-writer-check-");
    const { child, frame, read, ask } = startChild();
    const batch = async () => tableToIPC(await rowsTable(itemsSchema(), rows(5, 0)), "file");
    const write = (table: string) => ({ op: "replace", table, schema: "items", deleteKeys: [], context: false });
    try {
      await ask({ op: "open", location: { uri: dir } });
      await ask(write("mem_sound"), await batch());
      await ask(write("mem_spoilt"), await batch());
      expect((await ask({ op: "check" })).damaged).toEqual([]);
      const spoil = (path: string) => {
        for (const name of readdirSync(path)) {
          const inner = join(path, name);
          if (statSync(inner).isDirectory()) spoil(inner);
          else writeFileSync(inner, "garbage");
        }
      };
      spoil(join(dir, "mem_spoilt.lance"));
      expect((await ask({ op: "check" })).damaged).toEqual([{ name: "mem_spoilt", reason: expect.any(String) }]);
      frame({ op: "end" });
      child.stdin.end();
      expect(await child.exited).toBe(0);
      await read;
    } finally {
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
