import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { allMigrations } from "../src/migrations";
import { migrate } from "../src/db/migrate";
import { openStoreFor } from "../src/db/open";
import { all, run, sql } from "../src/db/store";
import { extractPdfText } from "../src/files/pdf-text";
import { PDF_TEXT_BUDGET } from "../src/files/text";
import { pdfBomb, pdfDocument, manyPagesPdf, textPdf, waitForText } from "./helpers/pdf";
import { databaseUrlFor, dropDatabaseFor } from "./helpers/database";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { createWorkspace } from "./helpers/workspaces";

const server = await startTestServer();
afterAll(() => server.destroy());

async function upload(s: TestServer, ws: string, filename: string, bytes: Uint8Array, token = "mock-token-alice") {
  const [, issued] = await s.call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
    body: { filename, contentType: "application/pdf" },
    token,
  });
  const response = await fetch(issued.url, {
    method: "PUT",
    body: bytes,
    headers: { "content-type": "application/pdf" },
  });
  if (response.status !== 201) throw new Error(`PUT: ${response.status} ${await response.text()}`);
  return { key: issued.key as string, info: (await response.json()) as { indexing: unknown } };
}

const listFiles =
  (s: TestServer, ws: string, token = "mock-token-alice") =>
  async () => {
    const [status, body] = await s.call("GET", `/v1/workspaces/${ws}/files?limit=100`, { token });
    if (status !== 200) throw new Error(`list: ${status} ${JSON.stringify(body)}`);
    return body.files;
  };

const fileHits = async (s: TestServer, ws: string, query: string, token = "mock-token-alice") => {
  const [status, body] = await s.call("POST", "/v1/documents/query", {
    body: { workspace_id: ws, query, include: { files: true, notes: false } },
    token,
  });
  if (status !== 200) throw new Error(`query: ${status} ${JSON.stringify(body)}`);
  return body.items.map((item: { sourceId: string; content: string }) => ({
    sourceId: item.sourceId,
    content: item.content,
  }));
};

/** The download's status, and whether its bytes are `bytes`. */
const downloads = async (s: TestServer, ws: string, key: string, bytes: Uint8Array) => {
  const response = await fetch(`${s.url}/v1/workspaces/${ws}/files/${key}`, {
    headers: { authorization: "Bearer mock-token-alice" },
  });
  return [response.status, Buffer.from(await response.arrayBuffer()).equals(bytes)] as const;
};

const notIndexed = (reason: string, message: string) => ({ status: "not_indexed", reason, message });

describe("PDF text is read in a child process, off the upload", () => {
  test("a small PDF: pending at upload, then indexed and found; another user sees none of it", async () => {
    const ws = await createWorkspace(server, "Reports");
    const { key, info } = await upload(server, ws, "census.pdf", textPdf("Quarterly albatross census"));
    expect(info.indexing).toEqual({ status: "pending" });
    expect(await waitForText(listFiles(server, ws), key)).toEqual({ status: "indexed" });
    expect(await fileHits(server, ws, "albatross")).toEqual([{ sourceId: key, content: "Quarterly albatross census" }]);

    const bobWs = await createWorkspace(server, "Bob's", "mock-token-bob");
    expect(await fileHits(server, bobWs, "albatross", "mock-token-bob")).toEqual([]);
    expect((await server.call("GET", `/v1/workspaces/${ws}/files`, { token: "mock-token-bob" }))[0]).toBe(404);
  });

  test("pages past the cap, a damaged PDF: stored and downloadable, not indexed, with the reason", async () => {
    const ws = await createWorkspace(server, "Bounds");
    const long = manyPagesPdf(PDF_TEXT_BUDGET.maxPages + 1);
    const damaged = new TextEncoder().encode("%PDF-1.4\nthis is not a PDF body\n%%EOF\n");
    const tooLong = await upload(server, ws, "long.pdf", long);
    const broken = await upload(server, ws, "broken.pdf", damaged);

    expect(await waitForText(listFiles(server, ws), tooLong.key)).toEqual(
      notIndexed("too_many_pages", "PDFs of more than 2,000 pages are stored, not indexed"),
    );
    expect(await waitForText(listFiles(server, ws), broken.key)).toEqual(
      notIndexed("unreadable", "its text could not be read (a damaged PDF, or one that needs a password)"),
    );
    expect(await downloads(server, ws, tooLong.key, long)).toEqual([200, true]);
    expect(await downloads(server, ws, broken.key, damaged)).toEqual([200, true]);
    expect(await fileHits(server, ws, "page")).toEqual([]);
  });

  test("a PDF left pending by a server that stopped is read by the next one", async () => {
    const dataDir = tempDir();
    const first = await startTestServer({ dataDir });
    const ws = await createWorkspace(first, "Restarted");
    // A bomb takes the child seconds: the stop below kills it mid-way. (10 MB of operators: 5.9 MB of text.)
    const { key } = await upload(first, ws, "bomb.pdf", pdfBomb(10 * 1024 * 1024));
    await first.stop();

    const second = await startTestServer({ dataDir });
    try {
      expect(await waitForText(listFiles(second, ws), key)).toEqual(
        notIndexed("text_too_large", "its text is over 5 MB, the most a PDF may have to be indexed"),
      );
      expect(await fileHits(second, ws, "dull boy")).toEqual([]);
    } finally {
      await second.destroy();
    }
  });
});

describe("the child's budget", () => {
  const read = (bytes: Uint8Array, budget: Partial<typeof PDF_TEXT_BUDGET>) =>
    extractPdfText(new Blob([bytes]).stream(), { ...PDF_TEXT_BUDGET, ...budget });

  test("text past the cap stops the reading; within it, pages come back separated by a blank line", async () => {
    expect(
      await read(
        pdfDocument(["BT /F1 12 Tf 72 712 Td (first page) Tj ET", "BT /F1 12 Tf 72 712 Td (second page) Tj ET"]),
        {},
      ),
    ).toEqual({ ok: true, text: "first page\n\nsecond page", pages: 2 });
    expect(await read(pdfBomb(2 * 1024 * 1024), { maxTextBytes: 64 * 1024 })).toEqual({
      ok: false,
      reason: "text_too_large",
      detail: "stopped on page 1",
    });
  });

  test("a bomb over the memory budget is killed: memory_limit", async () => {
    // pdf.js alone takes ~60 MB; the bomb's 20 MB stream takes it past 150 MB.
    expect(await read(pdfBomb(), { memoryBytes: 100 * 1024 * 1024 })).toEqual({ ok: false, reason: "memory_limit" });
  });

  test("a reading over the time budget is killed: time_limit", async () => {
    // Loading pdf.js alone takes the child longer than 50 ms.
    expect(await read(pdfBomb(), { timeMs: 50 })).toEqual({ ok: false, reason: "time_limit" });
  });
});

describe("PDFs stored before text states", () => {
  test("one whose stored text is over the cap is read again within the bounds; others keep what they have", async () => {
    const dataDir = tempDir();
    const store = openStoreFor({ databaseUrl: await databaseUrlFor(dataDir, { migrated: false }) }, dataDir);
    try {
      await migrate(
        store,
        allMigrations.filter((m) => m.id !== "0440_file_text_status"),
      );
      const file = async (key: string, contentType: string, textChars: number) => {
        await run(
          store.db,
          sql`INSERT INTO files (owner_id, workspace_id, key, name, content_type, size, sha256, blob_id, created_at, updated_at)
                                VALUES ('alice', 'ws', ${key}, ${key}, ${contentType}, 1, 'x', ${`blob-${key}`}, 't', 't')`,
        );
        // Blocks of up to 1,000,000 characters: only their total counts here.
        for (let at = 0, position = 0; at < textChars; at += 1_000_000, position++) {
          await run(
            store.db,
            sql`INSERT INTO file_blocks (owner_id, file_key, position, content) VALUES ('alice', ${key}, ${position}, ${"x".repeat(Math.min(1_000_000, textChars - at))})`,
          );
        }
      };
      await file("bomb", "application/pdf", 5_300_000);
      await file("bomb-typed", "application/pdf; name=x", 5_300_000);
      await file("report", "application/pdf", 10_000);
      await file("log", "text/plain", 5_300_000);
      await migrate(store, allMigrations);
      expect(await all(store.db, sql`SELECT key, text_status FROM files ORDER BY key`)).toEqual([
        { key: "bomb", text_status: "pending" },
        { key: "bomb-typed", text_status: "pending" },
        { key: "log", text_status: null },
        { key: "report", text_status: null },
      ]);
    } finally {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
      await dropDatabaseFor(dataDir);
    }
  });
});
