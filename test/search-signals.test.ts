import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server";

/** `signals` on memory search: the recall bench's ablations name the signals to rank with. */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.destroy());

test("POST /v1/memories/search takes signals (text, words, time, vector) and refuses anything else naming it", async () => {
  await server.call("POST", "/v1/memories", { body: { content: "Alice adopted a puppy" } });
  const [status, body] = await server.call("POST", "/v1/memories/search", {
    body: { query: "puppy", signals: ["text", "words", "time", "vector"] },
  });
  expect([status, body.results.length]).toEqual([200, 1]);
  for (const signals of [["bogus"], [], ["text", "text"], "text", ["text", "words", "time", "vector", "text"]]) {
    const [refused, error] = await server.call("POST", "/v1/memories/search", { body: { query: "puppy", signals } });
    expect([refused, error.error.code]).toEqual([400, "invalid_request"]);
    expect(error.error.message).toStartWith("signals");
  }
});
