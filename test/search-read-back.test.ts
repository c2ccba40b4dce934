import { afterAll, expect, test } from "bun:test";
import { mock, startTestServer, type TestServer } from "./helpers/server";

const servers: TestServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.destroy();
});

test("hits deleted from the store but still in the index are skipped and the next candidates fill the list, however many were deleted", async () => {
  const server = await startTestServer();
  servers.push(server);
  const token = mock("reader");
  const ids: string[] = [];
  // Twenty that rank first (the word three times in a short text), ten that rank after them.
  for (let i = 0; i < 20; i++) {
    const [, body] = await server.call("POST", "/v1/memories", { token, body: { content: `kite kite kite ${i}` } });
    ids.push(body.id);
  }
  for (let i = 0; i < 10; i++)
    await server.call("POST", "/v1/memories", {
      token,
      body: { content: `a kite seen over the long grey beach, note ${i}` },
    });
  const [, before] = await server.call("POST", "/v1/memories/search", { token, body: { query: "kite", limit: 10 } });
  expect(
    before.results.map((r: { content: string }) => r.content).every((c: string) => c.startsWith("kite kite kite")),
  ).toBe(true);
  // No index writer from here on: the deletes reach the store, never the index.
  await server.services.indexer.stop();
  for (const id of ids) expect((await server.call("DELETE", `/v1/memories/${id}`, { token }))[0]).toBe(200);
  const [status, after] = await server.call("POST", "/v1/memories/search", {
    token,
    body: { query: "kite", limit: 10 },
  });
  expect(status).toBe(200);
  const contents = after.results.map((r: { content: string }) => r.content);
  expect(contents).toHaveLength(10);
  expect(contents.every((c: string) => c.startsWith("a kite seen"))).toBe(true);
});
