import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { importFile } from "../src/transfer/import";
import { startTestServer, type TestServer } from "./helpers/server";

/** `GET /v1/memories` is newest first by `createdAt` (docs/api.md#core-and-memories), ties by id, not in insertion order. */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.destroy());

test("imported memories with older creation dates list by createdAt descending (ties by id), in pages too", async () => {
  const token = "mock-token-importer";
  const [, fresh] = await server.call("POST", "/v1/memories", { token, body: { content: "written today" } });
  // The import path keeps each memory's own creation date; inserted after the fresh one, in no date order.
  const file = join(server.dataDir, "older.jsonl");
  const lines = [
    { id: "imp-b", content: "from 2021 (b)", created_at: "2021-06-01T10:00:00.000Z" },
    { id: "imp-c", content: "from 2019", created_at: "2019-01-01T00:00:00.000Z" },
    { id: "imp-a", content: "from 2021 (a)", created_at: "2021-06-01T10:00:00.000Z" },
    { id: "imp-d", content: "from 2023", created_at: "2023-03-03T03:03:03.000Z" },
  ];
  writeFileSync(file, lines.map((line) => JSON.stringify(line)).join("\n"));
  const s = server.services;
  const report = await importFile({ store: s.store, outbox: s.outbox, config: s.config }, file, { userId: "importer" });
  expect(report.inserted).toBe(4);
  const expected = [fresh.id, "imp-d", "imp-b", "imp-a", "imp-c"];
  const [, whole] = await server.call("GET", "/v1/memories", { token });
  expect(whole.data.map((m: { id: string }) => m.id)).toEqual(expected);
  expect(whole.data.map((m: { createdAt: string }) => m.createdAt).slice(1)).toEqual([
    "2023-03-03T03:03:03.000Z",
    "2021-06-01T10:00:00.000Z",
    "2021-06-01T10:00:00.000Z",
    "2019-01-01T00:00:00.000Z",
  ]);
  const paged: string[] = [];
  let cursor: string | null = null;
  do {
    const [status, page]: [number, any] = await server.call(
      "GET",
      `/v1/memories?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      { token },
    );
    expect(status).toBe(200);
    paged.push(...page.data.map((m: { id: string }) => m.id));
    cursor = page.nextCursor;
  } while (cursor);
  expect(paged).toEqual(expected);
});

test("a cursor is its owner's own: another user's request refuses it, and sees none of the importer's memories", async () => {
  const [, first] = await server.call("GET", "/v1/memories?limit=1", { token: "mock-token-importer" });
  expect(first.nextCursor).toEqual(expect.any(String));
  const refused = await server.call("GET", `/v1/memories?limit=1&cursor=${first.nextCursor}`, {
    token: "mock-token-other",
  });
  expect(refused).toEqual([
    400,
    { error: { code: "invalid_request", message: "cursor: is not a cursor returned by this API" } },
  ]);
  expect(await server.call("GET", "/v1/memories", { token: "mock-token-other" })).toEqual([
    200,
    { data: [], nextCursor: null, hasMore: false },
  ]);
});
