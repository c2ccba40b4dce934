import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { randomInt } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { all, openSqliteStore, run, sql } from "../src/db/store";
import { TEST_DATABASE_URL } from "./helpers/database";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { startFakeEmbedder } from "./helpers/fake-embedder";
import { createWorkspace } from "./helpers/workspaces";
import { waitFor, waitUntil } from "./helpers/wait";

/**
 * Deleted means gone from disk: after a memory (and its earlier text), a document, a note
 * and a file (its bytes and extracted text) are deleted through the API, and nothing else
 * is written, no file under the data dir holds their text any more: not the SQLite file
 * or its WAL, not the search index (data, deletion and index files, old versions), not
 * the file bytes. The bound is shortened here (MNEMO_PURGE_WITHIN_MS); what removes the
 * text is the server's own background work. Text written beside them and kept is found
 * by the same scan, so the scan can fail.
 */
const PURGE_WITHIN = { MNEMO_PURGE_WITHIN_MS: "2000" };
const servers: TestServer[] = [];
const embedder = startFakeEmbedder(64);
afterAll(async () => {
  for (const server of servers) await server.destroy();
  embedder.stop();
});

/** A word no text holds by chance: letters only, so the analyzer keeps it one token. */
const word = (prefix: string) =>
  prefix + Array.from({ length: 14 }, () => String.fromCharCode(97 + randomInt(26))).join("");

const filesUnder = (path: string): string[] =>
  existsSync(path)
    ? readdirSync(path, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? filesUnder(join(path, entry.name)) : [join(path, entry.name)],
      )
    : [];

/**
 * The words found in any file under `dir`, as raw UTF-8 bytes. A word is looked for
 * without its last three letters too, so a stemmed index term is caught as well.
 */
function foundOnDisk(dir: string, words: string[]): string[] {
  const found = new Set<string>();
  for (const path of filesUnder(dir)) {
    let bytes: string;
    try {
      bytes = readFileSync(path).toString("latin1");
    } catch {
      continue; // removed meanwhile (a rewrite, a checkpoint)
    }
    for (const w of words) if (bytes.includes(w.slice(0, -3))) found.add(w);
  }
  return words.filter((w) => found.has(w));
}

/** Uploads `text` as a text file through a presigned URL; returns its key. */
async function putFile(server: TestServer, ws: string, text: string): Promise<string> {
  const [status, issued] = await server.call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
    body: { filename: "secret.txt", contentType: "text/plain" },
  });
  expect(status).toBe(200);
  expect(
    (await fetch(issued.url, { method: "PUT", headers: { "content-type": "text/plain" }, body: text })).status,
  ).toBe(201);
  return issued.key;
}

async function ok(server: TestServer, method: string, path: string, body?: unknown): Promise<any> {
  const [status, result] = await server.call(method, path, { body });
  if (status >= 300) throw new Error(`${method} ${path}: ${status} ${JSON.stringify(result)}`);
  return result;
}

/** One of everything, each with a word of its own; returns the words and how to delete each. */
async function writeEverything(server: TestServer, ws: string) {
  const w = {
    memoryBefore: word("memoryold"),
    memory: word("memorynew"),
    document: word("document"),
    note: word("notebody"),
    legacyDeleted: word("legacydel"),
    file: word("filebytes"),
    keptMemory: word("keptmemory"),
    keptMessage: word("keptmessage"),
  };
  const memory = await ok(server, "POST", "/v1/memories", { content: `the old secret is ${w.memoryBefore}` });
  // Its earlier text goes to its history: a delete takes it too.
  await ok(server, "PATCH", `/v1/memories/${memory.id}`, { content: `the secret is ${w.memory}` });
  await ok(server, "POST", "/v1/memories", { content: `kept: ${w.keptMemory}` });
  const document = await ok(server, "POST", "/v1/documents", {
    workspace_id: ws,
    title: "Secret",
    markdown: `# Secret\n\nthe document says ${w.document}`,
  });
  // Indexed by a unified write, deleted through the legacy notes route.
  const legacy = await ok(server, "POST", "/v1/documents", {
    workspace_id: ws,
    title: "Legacy",
    markdown: `# Legacy\n\nthe legacy note says ${w.legacyDeleted}`,
  });
  const note = await ok(server, "POST", `/v1/workspaces/${ws}/notes`, {
    documentPayload: { text: w.note },
    blocksPayload: [{ id: "b", content: w.note }],
    markdown: `note ${w.note}`,
  });
  const thread = await ok(server, "POST", `/v1/workspaces/${ws}/chats`, { title: "Chat" });
  await ok(server, "POST", `/v1/workspaces/${ws}/chats/${thread.id}/messages`, {
    role: "user",
    content: `kept message ${w.keptMessage}`,
  });
  const fileKey = await putFile(server, ws, `the file says ${w.file}`);
  const deleteAll = async () => {
    await ok(server, "DELETE", `/v1/memories/${memory.id}`);
    await ok(server, "DELETE", `/v1/workspaces/${ws}/documents/${document.document.id}`);
    await ok(server, "DELETE", `/v1/workspaces/${ws}/notes/${note.id}`);
    await ok(server, "DELETE", `/v1/workspaces/${ws}/notes/${legacy.document.id}`);
    await ok(server, "DELETE", `/v1/workspaces/${ws}/files/${encodeURIComponent(fileKey)}`);
  };
  const deleted = [w.memoryBefore, w.memory, w.document, w.note, w.legacyDeleted, w.file];
  // What the search index holds (a note's text is never indexed; the memory's old text left it at the update).
  const indexed = [w.memory, w.document, w.legacyDeleted, w.file, w.keptMemory, w.keptMessage];
  return { deleted, kept: [w.keptMemory, w.keptMessage], indexed, deleteAll };
}

/** Until the index has taken in every write: every indexed word is in its files. */
async function untilIndexed(server: TestServer, ws: string, indexed: string[]): Promise<void> {
  await waitFor(async () => (await server.call("GET", `/v1/workspaces/${ws}/index/status`))[1].pending.text === 0, {
    what: "the index to take in the writes",
  });
  await waitUntil(
    () => foundOnDisk(join(server.dataDir, "index"), indexed),
    (found) => found.length === indexed.length,
    { what: "every indexed word in the index's files", everyMs: 100 },
  );
}

describe("deleted text leaves the data dir", () => {
  test("memory (and its history), document, note and file: no file under the data dir holds their text once the bound passes; kept text stays", async () => {
    const server = await startTestServer({ env: PURGE_WITHIN });
    servers.push(server);
    const ws = await createWorkspace(server, "Purge");
    const { deleted, kept, indexed, deleteAll } = await writeEverything(server, ws);
    await untilIndexed(server, ws, indexed);
    // The text was on disk: in the store of record's files (SQLite) and the index.
    expect(foundOnDisk(server.dataDir, [...deleted, ...kept])).toEqual(
      expect.arrayContaining(TEST_DATABASE_URL ? indexed : [...deleted, ...kept]),
    );
    await deleteAll();
    // Nothing else is written from here on.
    const left = await waitUntil(
      () => foundOnDisk(server.dataDir, deleted),
      (found) => found.length === 0,
      { what: "no file under the data dir to hold deleted text", everyMs: 200 },
    );
    expect({ deletedFound: left, keptFound: foundOnDisk(server.dataDir, kept) }).toEqual({
      deletedFound: [],
      keptFound: kept,
    });
    // The full-text index stores its terms where a byte scan cannot read them: what shows
    // that they went is that every file left belongs to each table's one current version,
    // written from the live rows alone (no older manifest, no deletion file).
    const tables = readdirSync(join(server.dataDir, "index")).filter((name) => name.endsWith(".lance"));
    const versions = () =>
      tables.map((table) => ({
        table,
        manifests: filesUnder(join(server.dataDir, "index", table, "_versions")).filter((f) => f.endsWith(".manifest"))
          .length,
        deletionFiles: filesUnder(join(server.dataDir, "index", table, "_deletions")).length,
      }));
    await waitUntil(versions, (now) => now.every((t) => t.manifests === 1 && t.deletionFiles === 0), {
      what: "every index table to keep its current version alone",
    });
    // And what is kept is still found by search, from the rewritten index.
    const [, found] = await server.call("POST", "/v1/memories/search", { body: { query: kept[0], signals: ["text"] } });
    expect(found.results.map((r: { content: string }) => r.content)).toEqual([`kept: ${kept[0]}`]);
  }, 60_000);

  test("a delete the server had not purged yet when it stopped is purged after a restart", async () => {
    const dataDir = tempDir();
    // A long bound: the first server stops before it comes.
    const first = await startTestServer({ dataDir, env: { MNEMO_PURGE_WITHIN_MS: "600000" } });
    const ws = await createWorkspace(first, "Restart");
    const secret = word("restartsecret");
    const kept = word("restartkept");
    const memory = await ok(first, "POST", "/v1/memories", { content: `the secret is ${secret}` });
    await ok(first, "POST", "/v1/memories", { content: `kept: ${kept}` });
    await untilIndexed(first, ws, [secret, kept]);
    await ok(first, "DELETE", `/v1/memories/${memory.id}`);
    await first.stop();
    expect(foundOnDisk(join(dataDir, "index"), [secret, kept])).toEqual([secret, kept]);
    const second = await startTestServer({ dataDir, env: PURGE_WITHIN });
    servers.push(second);
    const left = await waitUntil(
      () => foundOnDisk(dataDir, [secret]),
      (found) => found.length === 0,
      { what: "the restarted server to purge the deleted text", everyMs: 200 },
    );
    expect({ left, kept: foundOnDisk(join(dataDir, "index"), [kept]) }).toEqual({ left: [], kept: [kept] });
  }, 60_000);

  test("with an embedding model: the vector tables, which hold the text beside its vector, let go of it too", async () => {
    const server = await startTestServer({
      env: {
        ...PURGE_WITHIN,
        EMBEDDINGS_PROVIDER: "openai",
        EMBEDDINGS_URL: embedder.url,
        EMBEDDINGS_MODEL: "fake-64",
      },
    });
    servers.push(server);
    const ws = await createWorkspace(server, "Vectors");
    const secret = word("vectorsecret");
    const kept = word("vectorkept");
    const memory = await ok(server, "POST", "/v1/memories", { content: `the secret is ${secret}` });
    await ok(server, "POST", "/v1/memories", { content: `kept: ${kept}` });
    await untilIndexed(server, ws, [secret, kept]);
    const vectorTables = () => readdirSync(join(server.dataDir, "index")).filter((name) => name.includes("__v_"));
    await waitUntil(
      () => vectorTables().flatMap((table) => foundOnDisk(join(server.dataDir, "index", table), [secret])),
      (found) => found.length === 1,
      { what: "the text in a vector table" },
    );
    await ok(server, "DELETE", `/v1/memories/${memory.id}`);
    const left = await waitUntil(
      () => foundOnDisk(server.dataDir, [secret]),
      (found) => found.length === 0,
      { what: "no file under the data dir to hold deleted text", everyMs: 200 },
    );
    const keptInVectors = vectorTables().flatMap((table) => foundOnDisk(join(server.dataDir, "index", table), [kept]));
    expect({ left, keptInVectors }).toEqual({ left: [], keptInVectors: [kept] });
  }, 60_000);
});

describe.skipIf(Boolean(TEST_DATABASE_URL))("the SQLite WAL cut", () => {
  test("gives way at once to a reader on another connection (the CLI's) (false, nothing cut), and cuts the WAL to zero bytes once it is gone, keeping every commit", async () => {
    const dir = tempDir("mnemo-wal-cut-");
    const path = join(dir, "mnemo.sqlite");
    const store = openSqliteStore(path);
    try {
      await run(store.db, sql`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`);
      const secret = word("walsecret");
      await store.transaction((tx) => run(tx, sql`INSERT INTO notes (body) VALUES (${secret}), ('kept')`));
      await store.transaction((tx) => run(tx, sql`DELETE FROM notes WHERE body = ${secret}`));
      // Another connection reading, as a `mnemo` command would: its snapshot needs the WAL as it is.
      const reader = new Database(path);
      reader.exec("BEGIN");
      reader.query("SELECT count(*) FROM notes").get();
      expect(await store.truncateWal!()).toBe(false);
      expect(readFileSync(`${path}-wal`).toString("latin1").includes(secret)).toBe(true);
      reader.exec("COMMIT");
      reader.close();
      expect(await store.truncateWal!()).toBe(true);
      const files = [path, `${path}-wal`].filter(existsSync);
      expect({
        walBytes: statSync(`${path}-wal`).size,
        secretOnDisk: files.some((file) => readFileSync(file).toString("latin1").includes(secret)),
        rows: await all(store.db, sql`SELECT body FROM notes`),
      }).toEqual({ walBytes: 0, secretOnDisk: false, rows: [{ body: "kept" }] });
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
