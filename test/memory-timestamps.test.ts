import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { exportLines } from "../src/transfer/export";
import { importFile } from "../src/transfer/import";
import { callTool, connectMcpHttp, errorOf, ok } from "./helpers/mcp";
import { startTestServer, type TestServer } from "./helpers/server";

/** `timestamp` on create: the time a memory refers to becomes its `createdAt` (both backends: see scripts/test.ts). */
let server: TestServer;
let restored: TestServer;
let mcp: Client;
const token = "mock-token-stamper";

beforeAll(async () => {
  [server, restored] = await Promise.all([startTestServer(), startTestServer()]);
  mcp = (await connectMcpHttp(server.url, token)).client;
});
afterAll(async () => {
  await mcp.close().catch(() => {});
  await Promise.all([server.destroy(), restored.destroy()]);
});

const create = (body: Record<string, unknown> | string, as = token) =>
  server.call("POST", "/v1/memories", { token: as, body });

describe("POST /v1/memories with a timestamp", () => {
  test("ISO 8601 (date, date-time, offsets, fractions) and Unix seconds become createdAt; updatedAt stays the time it was stored", async () => {
    const before = Date.now();
    const cases: [unknown, string][] = [
      ["2023-05-07", "2023-05-07T00:00:00.000Z"],
      ["2023-05-08T13:45:00Z", "2023-05-08T13:45:00.000Z"],
      ["2023-05-09T13:45", "2023-05-09T13:45:00.000Z"], // no offset: UTC
      ["2023-05-10 08:00:00.25+02:00", "2023-05-10T06:00:00.250Z"],
      [1683936000, "2023-05-13T00:00:00.000Z"],
      [1684022400.5, "2023-05-14T00:00:00.500Z"],
      [0, "1970-01-01T00:00:00.000Z"],
    ];
    for (const [timestamp, createdAt] of cases) {
      const [status, memory] = await create({ content: `at ${createdAt}`, session_id: "trip", timestamp });
      expect([status, memory.createdAt]).toEqual([201, createdAt]);
      expect(Date.parse(memory.updatedAt)).toBeGreaterThanOrEqual(before);
      expect(await server.call("GET", `/v1/memories/${memory.id}`, { token })).toEqual([200, memory]);
    }
  });

  test("the list is newest first by the given times, whatever the order of creation", async () => {
    const [, now] = await create({ content: "stored now, no timestamp" });
    const [, old] = await create({ content: "from 2001", timestamp: "2001-01-01T00:00:00Z" });
    const [, future] = await create({ content: "a planned trip", timestamp: "2031-07-01" });
    const [, list] = await server.call("GET", "/v1/memories?limit=1000", { token });
    const ids: string[] = list.data.map((m: { id: string }) => m.id);
    expect(ids.slice(0, 2)).toEqual([future.id, now.id]);
    expect(ids.at(-2)).toBe(old.id); // only 1970 is older
    const times: string[] = list.data.map((m: { createdAt: string }) => m.createdAt);
    expect(times).toEqual([...times].sort().reverse());
  });

  test("anything else is a 400 naming timestamp, and nothing is stored", async () => {
    const [, { data: before }] = await server.call("GET", "/v1/memories?limit=1000", { token });
    const refused: [unknown, string][] = [
      ["garbage", "must be an ISO 8601 date or date-time"],
      ["NaN", "must be an ISO 8601 date or date-time"],
      ["7 May 2023", "must be an ISO 8601 date or date-time"],
      ["2023-02-30", "must be an ISO 8601 date or date-time"],
      ["2023-05-07T25:00:00Z", "must be an ISO 8601 date or date-time"],
      ["2023-05-07T10:00:00+24:00", "must be an ISO 8601 date or date-time"],
      ["1969-12-31T23:59:59Z", "must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z"],
      [-1, "must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z"],
      [
        1_700_000_000_000,
        "must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z (as a number: Unix seconds, not milliseconds)",
      ],
    ];
    for (const [timestamp, problem] of refused) {
      const [status, body] = await create({ content: "refused", timestamp });
      expect([status, body.error.code]).toEqual([400, "invalid_request"]);
      expect(body.error.message).toStartWith(`timestamp: ${problem}`);
    }
    // JSON has no NaN or Infinity, but 1e400 parses to Infinity; wrong types fail the schema.
    for (const raw of [
      '{"content":"refused","timestamp":1e400}',
      '{"content":"refused","timestamp":true}',
      '{"content":"refused","timestamp":{}}',
      '{"content":"refused","timestamp":""}',
    ]) {
      const [status, body] = await create(raw);
      expect([status, body.error.code]).toEqual([400, "invalid_request"]);
      expect(body.error.message).toStartWith("timestamp: ");
    }
    const [, { data: after }] = await server.call("GET", "/v1/memories?limit=1000", { token });
    expect(after).toEqual(before);
  });

  test("another user sees none of them", async () => {
    await create({ content: "private, dated", timestamp: "2022-02-02" });
    expect(await server.call("GET", "/v1/memories", { token: "mock-token-someone-else" })).toEqual([
      200,
      { data: [], nextCursor: null, hasMore: false },
    ]);
  });
});

describe("elsewhere", () => {
  test("MCP remember takes timestamp, and refuses a bad one naming it", async () => {
    const memory = ok(
      await callTool(mcp, "remember", { content: "Went to Lisbon", timestamp: "2022-09-10T09:00:00Z" }),
    );
    expect(memory.createdAt).toBe("2022-09-10T09:00:00.000Z");
    const unix = ok(await callTool(mcp, "remember", { content: "Came back from Lisbon", timestamp: 1663200000 }));
    expect(unix.createdAt).toBe("2022-09-15T00:00:00.000Z");
    expect(errorOf(await callTool(mcp, "remember", { content: "x", timestamp: "last May" })).error.message).toStartWith(
      "timestamp: must be an ISO 8601",
    );
  });

  test("export → import into another server keeps every createdAt; an import line's own timestamp counts too", async () => {
    const file = join(restored.dataDir, "export.jsonl");
    const lines: string[] = [];
    for await (const line of exportLines(server.services.store.db, "stamper")) lines.push(line);
    writeFileSync(file, lines.join("\n"));
    const s = restored.services;
    const report = await importFile({ store: s.store, outbox: s.outbox, config: s.config }, file, {
      userId: "stamper",
    });
    expect(report.failed).toBe(0);
    const [, original] = await server.call("GET", "/v1/memories?limit=1000", { token });
    const [, copy] = await restored.call("GET", "/v1/memories?limit=1000", { token });
    const summary = (list: { data: { id: string; createdAt: string; updatedAt: string }[] }) =>
      list.data.map((m) => [m.id, m.createdAt, m.updatedAt]);
    expect(summary(copy)).toEqual(summary(original));

    const jsonl = join(restored.dataDir, "lines.jsonl");
    writeFileSync(
      jsonl,
      [
        { content: "with a timestamp", timestamp: 1683475200 },
        { content: "ISO timestamp", timestamp: "2020-01-02" },
      ]
        .map((l) => JSON.stringify(l))
        .join("\n"),
    );
    await importFile({ store: s.store, outbox: s.outbox, config: s.config }, jsonl, { userId: "liner" });
    const [, imported] = await restored.call("GET", "/v1/memories", { token: "mock-token-liner" });
    expect(imported.data.map((m: { content: string; createdAt: string }) => [m.content, m.createdAt])).toEqual([
      ["with a timestamp", "2023-05-07T16:00:00.000Z"],
      ["ISO timestamp", "2020-01-02T00:00:00.000Z"],
    ]);
  });
});
