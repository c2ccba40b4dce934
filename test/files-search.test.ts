import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "./helpers/server";
import { waitForText } from "./helpers/pdf";
import { createDocument, createWorkspace } from "./helpers/workspaces";
import { waitFor } from "./helpers/wait";

const server = await startTestServer();
afterAll(() => server.destroy());

async function upload(s: TestServer, ws: string, filename: string, contentType: string, bytes: Uint8Array | string) {
  const [, issued] = await s.call("POST", `/v1/workspaces/${ws}/files/upload-url`, { body: { filename, contentType } });
  const response = await fetch(issued.url, { method: "PUT", body: bytes, headers: { "content-type": contentType } });
  if (response.status !== 201) throw new Error(`PUT: ${response.status} ${await response.text()}`);
  return issued.key as string;
}

const fileHits = async (ws: string, query: string, token?: string) => {
  // Full text alone: these tests are about what each file's text holds, not about the word vectors' neighbours.
  const [status, body] = await server.call("POST", "/v1/documents/query", {
    body: { workspace_id: ws, query, include: { files: true, notes: false }, signals: ["text"] },
    token,
  });
  if (status !== 200) throw new Error(`query: ${status} ${JSON.stringify(body)}`);
  return body.items.map((item: { type: string; sourceId: string; title: string | null; content: string }) => ({
    type: item.type,
    sourceId: item.sourceId,
    title: item.title,
    content: item.content,
  }));
};

/** A one-page PDF whose text is `text` (Helvetica, no compression). */
function tinyPdf(text: string): Uint8Array {
  const stream = `BT /F1 18 Tf 20 100 Td (${text}) Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 144] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let out = "%PDF-1.4\n";
  const offsets = objects.map((object, i) => {
    const at = out.length;
    out += `${i + 1} 0 obj\n${object}\nendobj\n`;
    return at;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(out, "latin1"));
}

describe("text files in the documents query", () => {
  test("Markdown, CSV, JSON and PDF text is found with include.files; deleting the file removes it", async () => {
    const ws = await createWorkspace(server, "Searchable");
    const md = await upload(
      server,
      ws,
      "keeper.md",
      "text/markdown",
      "# Log\n\nThe lighthouse keeper feeds the gulls.\n\nNothing else happened.",
    );
    const csv = await upload(
      server,
      ws,
      "ferries.csv",
      "text/csv; charset=utf-8",
      "route,departs\nharbour-island,dawn ferry\n",
    );
    const json = await upload(
      server,
      ws,
      "tide.json",
      "application/json",
      JSON.stringify({ note: "spring tide floods the causeway" }),
    );
    const pdf = await upload(server, ws, "report.pdf", "application/pdf", tinyPdf("Quarterly albatross census"));
    await upload(server, ws, "photo.png", "image/png", new Uint8Array([137, 80, 78, 71, 1, 2, 3]));
    // A PDF's text is read after the upload, in a child process.
    expect(
      await waitForText(async () => (await server.call("GET", `/v1/workspaces/${ws}/files`))[1].files, pdf),
    ).toEqual({ status: "indexed" });

    expect(await fileHits(ws, "lighthouse gulls")).toEqual([
      {
        type: "file",
        sourceId: md,
        title: "keeper.md",
        content: "# Log\n\nThe lighthouse keeper feeds the gulls.\n\nNothing else happened.",
      },
    ]);
    expect((await fileHits(ws, "ferry")).map((hit: { sourceId: string }) => hit.sourceId)).toEqual([csv]);
    expect((await fileHits(ws, "causeway")).map((hit: { sourceId: string }) => hit.sourceId)).toEqual([json]);
    expect(await fileHits(ws, "albatross")).toEqual([
      { type: "file", sourceId: pdf, title: "report.pdf", content: "Quarterly albatross census" },
    ]);
    // Files are searched only when asked for.
    const [, notesOnly] = await server.call("POST", "/v1/documents/query", {
      body: { workspace_id: ws, query: "lighthouse" },
    });
    expect(notesOnly.items).toEqual([]);
    // Another user finds nothing of it.
    const bobWs = await createWorkspace(server, "Bob", "mock-token-bob");
    expect(await fileHits(bobWs, "lighthouse", "mock-token-bob")).toEqual([]);

    expect((await server.call("DELETE", `/v1/workspaces/${ws}/files/${md}`))[0]).toBe(200);
    expect(await fileHits(ws, "lighthouse gulls")).toEqual([]);
    expect((await fileHits(ws, "albatross")).length).toBe(1);
  });
});

describe("the blob store is not the index", () => {
  test("reindex, index clear and a full index rebuild leave every file's bytes in place; file search comes back", async () => {
    const ws = await createWorkspace(server, "Rebuilt");
    await createDocument(server, ws, { title: "Doc", indexable_blocks: [{ id: "b1", content: "an ordinary block" }] });
    const bytes = new Uint8Array(1_500_000).map((_, i) => (i * 7) & 0xff);
    const bin = await upload(server, ws, "data.bin", "application/octet-stream", bytes);
    const txt = await upload(server, ws, "heron.txt", "text/plain", "a grey heron waits by the weir");
    const blobs = await server.services.blobs.list();

    expect((await server.call("POST", `/v1/workspaces/${ws}/index/clear`))[0]).toBe(200);
    expect((await server.call("POST", `/v1/workspaces/${ws}/reindex`))[0]).toBe(200);
    // The whole index: dropped and rebuilt from the store of record by the index writer.
    await server.services.store.transaction((tx) => server.services.outbox.enqueueRebuild(tx));
    await waitFor(async () => (await server.services.outbox.pendingTextSeq()) === null, {
      what: "the rebuild's text work to be done",
      everyMs: 50,
    });

    expect((await server.services.blobs.list()).sort()).toEqual(blobs.sort());
    const response = await fetch(`${server.url}/v1/workspaces/${ws}/files/${bin}`, {
      headers: { authorization: "Bearer mock-token-alice" },
    });
    expect(Buffer.compare(Buffer.from(await response.arrayBuffer()), Buffer.from(bytes))).toBe(0);
    expect((await fileHits(ws, "heron weir")).map((hit: { sourceId: string }) => hit.sourceId)).toEqual([txt]);
    // Blobs sit beside the index, never inside it.
    expect([existsSync(join(server.dataDir, "blobs")), server.services.blobs.uri]).toEqual([
      true,
      join(server.dataDir, "blobs"),
    ]);
  });
});
