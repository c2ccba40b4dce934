import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { databaseUrlFor, TEST_DATABASE_URL } from "./helpers/database";
import { startTestServer, type TestServer } from "./helpers/server";
import { createWorkspace } from "./helpers/workspaces";

/**
 * After encrypted writes, nothing under the data dir (SQLite file, WAL, the LanceDB index)
 * and no PostgreSQL table holds any of the payload plaintext; a plaintext control document
 * written beside them is found by the same scan, so the scan itself is known to work.
 */
const KEY = randomBytes(32).toString("hex");
const tag = randomBytes(6).toString("hex");
const SECRETS = [`payloadsecret${tag}`, `blockssecret${tag}`, `markdownsecret${tag}`, `chatsecret${tag}`, `notebooksecret${tag}`];
const CONTROL = `plaincontrol${tag}`;

let server: TestServer;
let ws: string;

beforeAll(async () => {
  server = await startTestServer();
  ws = await createWorkspace(server, "Scan");
  const write = async (method: string, path: string, body: unknown, status: number) => {
    const [code, result] = await server.call(method, path, { body });
    expect([path, code]).toEqual([path, status]);
    return result;
  };
  await write("POST", "/v1/documents", {
    workspace_id: ws, title: "Encrypted note", client_key: KEY,
    document_payload: { text: SECRETS[0] }, blocks_payload: [{ id: "b", content: SECRETS[1] }], markdown: `# Title\n\n${SECRETS[2]}`,
    indexable_blocks: [{ id: "i", content: "public searchable words" }],
  }, 201);
  // The same document sealed without indexable blocks: its (encrypted) markdown is never indexed.
  await write("POST", `/v1/workspaces/${ws}/documents`, { title: "No blocks", markdown: SECRETS[2], document_payload: { t: SECRETS[0] }, clientKey: KEY }, 201);
  await write("POST", "/v1/documents", { workspace_id: ws, title: "Control", markdown: `control ${CONTROL}` }, 201);
  const thread = await write("POST", `/v1/workspaces/${ws}/chats`, { title: "Chat" }, 201);
  await write("POST", `/v1/workspaces/${ws}/chats/${thread.id}/messages`, { role: "user", content: SECRETS[3], client_key: KEY }, 201);
  await write("POST", `/v1/workspaces/${ws}/chats/${thread.id}/messages`, { role: "assistant", content: `reply ${CONTROL}` }, 201);
  await write("POST", `/v1/workspaces/${ws}/notes`, { documentPayload: { x: 1 }, blocksPayload: [] }, 201);
  // Wait until the index has taken every write in.
  for (;;) {
    const [, status] = await server.call("GET", `/v1/workspaces/${ws}/index/status`);
    if (status.pending.text === 0 && status.messages === 1) break;
    await Bun.sleep(50);
  }
  const [, found] = await server.call("POST", "/v1/documents/query", { body: { workspace_id: ws, query: "public searchable words" } });
  expect(found.items.length).toBeGreaterThan(0);
});
afterAll(() => server.destroy());

/** Which of `needles` occur in any file under `dir`, as UTF-8 bytes. */
function scanDir(dir: string, needles: string[]): { found: string[]; files: number } {
  const found = new Set<string>();
  let files = 0;
  const walk = (path: string) => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      const info = statSync(full);
      if (info.isDirectory()) walk(full);
      else if (info.isFile()) {
        files++;
        const bytes = readFileSync(full);
        for (const needle of needles) if (bytes.includes(Buffer.from(needle, "utf8"))) found.add(needle);
      }
    }
  };
  walk(dir);
  return { found: [...found].sort(), files };
}

test.skipIf(!!TEST_DATABASE_URL)("the embedded data dir (SQLite file and WAL, the index) holds none of the payload plaintext", async () => {
  const files = readdirSync(server.dataDir);
  expect(files).toContain("index");
  expect(files.some((f) => f.endsWith("-wal"))).toBe(true);
  expect(scanDir(server.dataDir, [...SECRETS, CONTROL]).found).toEqual([CONTROL]);
  // And once the server has stopped (WAL checkpointed into the file).
  await server.stop();
  expect(scanDir(server.dataDir, [...SECRETS, CONTROL]).found).toEqual([CONTROL]);
});

test.skipIf(!TEST_DATABASE_URL)("no PostgreSQL table, and nothing in the data dir (the index), holds the payload plaintext", async () => {
  const client = new pg.Client({ connectionString: await databaseUrlFor(server.dataDir) });
  await client.connect();
  try {
    const tables = (await client.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)).rows.map((r) => r.tablename as string);
    expect(tables).toEqual(expect.arrayContaining(["documents", "chat_messages", "indexed_documents", "client_key_escrow", "outbox"]));
    const found = new Set<string>();
    for (const table of tables) {
      const rows = await client.query(`SELECT row_to_json(t)::text AS row FROM "${table}" t`);
      for (const { row } of rows.rows) for (const needle of [...SECRETS, CONTROL]) if ((row as string).includes(needle)) found.add(`${needle}@${table}`);
    }
    expect([...found].filter((hit) => !hit.startsWith(CONTROL))).toEqual([]);
    expect([...found].some((hit) => hit.startsWith(`${CONTROL}@documents`))).toBe(true);
  } finally {
    await client.end();
  }
  expect(scanDir(server.dataDir, SECRETS).found).toEqual([]);
});
