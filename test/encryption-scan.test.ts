import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { databaseUrlFor, TEST_DATABASE_URL } from "./helpers/database";
import { startTestServer, type TestServer } from "./helpers/server";
import { createWorkspace } from "./helpers/workspaces";
import { waitFor } from "./helpers/wait";

/**
 * After encrypted writes, nothing under the data dir (SQLite file, WAL, the LanceDB index,
 * the file bytes in blobs/) and no PostgreSQL table holds any of the payload plaintext; a
 * plaintext control document and file written beside them are found by the same scan, so
 * the scan itself is known to work. Files are sealed by a reverse-proxy-mode server.
 */
const KEY = randomBytes(32).toString("hex");
const tag = randomBytes(6).toString("hex");
const SECRETS = [
  `payloadsecret${tag}`,
  `blockssecret${tag}`,
  `markdownsecret${tag}`,
  `chatsecret${tag}`,
  `notebooksecret${tag}`,
];
const CONTROL = `plaincontrol${tag}`;
/** In files uploaded to a reverse-proxy-mode server: a presigned PUT, a completed upload session, an open one. */
const FILE_SECRETS = [`filesecret${tag}`, `sessionsecret${tag}`, `opensessionsecret${tag}`];
const FILE_CONTROL = `filecontrol${tag}`;

let server: TestServer;
let proxy: TestServer;
let ws: string;

/** Uploads `text` through a presigned URL of `s` and returns the file key. */
async function putFile(s: TestServer, workspaceId: string, text: string, headers: Record<string, string> = {}) {
  const [status, issued] = await s.call("POST", `/v1/workspaces/${workspaceId}/files/upload-url`, {
    body: { filename: "scan.txt", contentType: "text/plain" },
    headers,
  });
  expect([status, issued.error]).toEqual([200, undefined]);
  const put = await fetch(issued.url, {
    method: "PUT",
    body: `The file says ${text} twice: ${text}.`,
    headers: { "content-type": "text/plain", ...headers },
  });
  expect(put.status).toBe(201);
  return issued.key as string;
}

/** Files sealed by a reverse-proxy-mode server, and a plaintext control file on the plain one. */
async function writeFiles() {
  proxy = await startTestServer({ env: { MNEMO_PROXY_ENCRYPTION: "1" } });
  const pws = await createWorkspace(proxy, "Sealed files");
  const headers = { "x-client-key": KEY };
  await putFile(proxy, pws, FILE_SECRETS[0], headers);
  const session = async (text: string, finish: boolean) => {
    const [, { uploadId }] = await proxy.call("POST", "/v1/uploads/start", {
      body: { workspaceId: pws, filename: "s.txt", contentType: "text/plain" },
      headers,
    });
    const [status] = await proxy.call("POST", `/v1/uploads/${uploadId}/part`, {
      body: { partNumber: 1, data: Buffer.from(`part: ${text}`).toString("base64") },
      headers,
    });
    expect(status).toBe(200);
    if (finish) expect((await proxy.call("POST", `/v1/uploads/${uploadId}/complete`, { headers }))[0]).toBe(200);
  };
  await session(FILE_SECRETS[1], true);
  await session(FILE_SECRETS[2], false);
  await putFile(server, ws, FILE_CONTROL);
  // Both servers' indexes have taken in what they will (a sealed file queues nothing).
  for (const [s, w] of [
    [proxy, pws],
    [server, ws],
  ] as const) {
    await waitFor(async () => (await s.call("GET", `/v1/workspaces/${w}/index/status`))[1].pending.text === 0, {
      what: "the index to take in the files",
      everyMs: 50,
    });
  }
}

beforeAll(async () => {
  server = await startTestServer();
  ws = await createWorkspace(server, "Scan");
  const write = async (method: string, path: string, body: unknown, status: number) => {
    const [code, result] = await server.call(method, path, { body });
    expect([path, code]).toEqual([path, status]);
    return result;
  };
  await write(
    "POST",
    "/v1/documents",
    {
      workspace_id: ws,
      title: "Encrypted note",
      client_key: KEY,
      document_payload: { text: SECRETS[0] },
      blocks_payload: [{ id: "b", content: SECRETS[1] }],
      markdown: `# Title\n\n${SECRETS[2]}`,
      indexable_blocks: [{ id: "i", content: "public searchable words" }],
    },
    201,
  );
  // The same document sealed without indexable blocks: its (encrypted) markdown is never indexed.
  await write(
    "POST",
    `/v1/workspaces/${ws}/documents`,
    { title: "No blocks", markdown: SECRETS[2], document_payload: { t: SECRETS[0] }, clientKey: KEY },
    201,
  );
  await write("POST", "/v1/documents", { workspace_id: ws, title: "Control", markdown: `control ${CONTROL}` }, 201);
  const thread = await write("POST", `/v1/workspaces/${ws}/chats`, { title: "Chat" }, 201);
  await write(
    "POST",
    `/v1/workspaces/${ws}/chats/${thread.id}/messages`,
    { role: "user", content: SECRETS[3], client_key: KEY },
    201,
  );
  await write(
    "POST",
    `/v1/workspaces/${ws}/chats/${thread.id}/messages`,
    { role: "assistant", content: `reply ${CONTROL}` },
    201,
  );
  await write("POST", `/v1/workspaces/${ws}/notes`, { documentPayload: { x: 1 }, blocksPayload: [] }, 201);
  // Wait until the index has taken every write in.
  await waitFor(
    async () => {
      const [, status] = await server.call("GET", `/v1/workspaces/${ws}/index/status`);
      return status.pending.text === 0 && status.messages === 1;
    },
    { what: "the index to take every write in", everyMs: 50 },
  );
  const [, found] = await server.call("POST", "/v1/documents/query", {
    body: { workspace_id: ws, query: "public searchable words" },
  });
  expect(found.items.length).toBeGreaterThan(0);
  await writeFiles();
});
afterAll(async () => {
  await server.destroy();
  await proxy?.destroy();
});

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

test.skipIf(!!TEST_DATABASE_URL)(
  "the embedded data dir (SQLite file and WAL, the index) holds none of the payload plaintext",
  async () => {
    const files = readdirSync(server.dataDir);
    expect(files).toContain("index");
    expect(files.some((f) => f.endsWith("-wal"))).toBe(true);
    expect(scanDir(server.dataDir, [...SECRETS, CONTROL]).found).toEqual([CONTROL]);
    // And once the server has stopped (WAL checkpointed into the file).
    await server.stop();
    expect(scanDir(server.dataDir, [...SECRETS, CONTROL]).found).toEqual([CONTROL]);
  },
);

test.skipIf(!!TEST_DATABASE_URL)(
  "file bytes sealed in reverse-proxy mode: no marker in the data dir (SQLite, WAL, index, blobs/); the plaintext control file is found in blobs/",
  async () => {
    expect(readdirSync(proxy.dataDir)).toEqual(expect.arrayContaining(["blobs", "index"]));
    expect(readdirSync(proxy.dataDir).some((f) => f.endsWith("-wal"))).toBe(true);
    const blobs = scanDir(join(proxy.dataDir, "blobs"), FILE_SECRETS);
    expect(blobs.files).toBeGreaterThan(0);
    expect(scanDir(proxy.dataDir, FILE_SECRETS).found).toEqual([]);
    expect(scanDir(join(server.dataDir, "blobs"), [FILE_CONTROL]).found).toEqual([FILE_CONTROL]);
    await proxy.stop();
    expect(scanDir(proxy.dataDir, FILE_SECRETS).found).toEqual([]);
  },
);

/** Which of `needles` occur in any row of any table of the database behind `dataDir`, as `needle@table`. */
async function scanTables(dataDir: string, needles: string[]): Promise<{ found: string[]; tables: string[] }> {
  const client = new pg.Client({ connectionString: await databaseUrlFor(dataDir) });
  await client.connect();
  try {
    const tables = (await client.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)).rows.map(
      (r) => r.tablename as string,
    );
    const found = new Set<string>();
    for (const table of tables) {
      const rows = await client.query(`SELECT row_to_json(t)::text AS row FROM "${table}" t`);
      for (const { row } of rows.rows)
        for (const needle of needles) if ((row as string).includes(needle)) found.add(`${needle}@${table}`);
    }
    return { found: [...found], tables };
  } finally {
    await client.end();
  }
}

test.skipIf(!TEST_DATABASE_URL)(
  "file bytes sealed in reverse-proxy mode: in no PostgreSQL table, nowhere in the data dir (index, blobs/)",
  async () => {
    const { found, tables } = await scanTables(proxy.dataDir, FILE_SECRETS);
    expect(tables).toEqual(expect.arrayContaining(["files", "file_blocks", "upload_parts", "outbox"]));
    expect(found).toEqual([]);
    expect(scanDir(join(proxy.dataDir, "blobs"), FILE_SECRETS)).toEqual({ found: [], files: expect.any(Number) });
    expect(scanDir(proxy.dataDir, FILE_SECRETS).found).toEqual([]);
    expect(scanDir(join(server.dataDir, "blobs"), [FILE_CONTROL]).found).toEqual([FILE_CONTROL]);
  },
);

test.skipIf(!TEST_DATABASE_URL)(
  "no PostgreSQL table, and nothing in the data dir (the index), holds the payload plaintext",
  async () => {
    const { found, tables } = await scanTables(server.dataDir, [...SECRETS, CONTROL]);
    expect(tables).toEqual(
      expect.arrayContaining(["documents", "chat_messages", "indexed_documents", "client_key_escrow", "outbox"]),
    );
    expect(found.filter((hit) => !hit.startsWith(CONTROL))).toEqual([]);
    expect(found.some((hit) => hit.startsWith(`${CONTROL}@documents`))).toBe(true);
    expect(scanDir(server.dataDir, SECRETS).found).toEqual([]);
  },
);
