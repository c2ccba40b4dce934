import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../src/lib/log";
import { TEST_DATABASE_URL } from "./helpers/database";
import { startFakeUpstream, type FakeUpstream } from "./helpers/fake-upstream";
import { startTestServer, type TestServer } from "./helpers/server";

const backend = TEST_DATABASE_URL ? "PostgreSQL" : "the embedded store";

describe(`what a stream passes on, on ${backend}`, () => {
  const GATEWAY_KEY = "gw-live-key-456";
  const secrets = ["sk-gw-Zx81Qm2Lr7Tt9Vb3", GATEWAY_KEY, "hunter2", "10.20.30.40"];
  const leaky = `upstream http://svc:hunter2@10.20.30.40:4000 rejected sk-gw-Zx81Qm2Lr7Tt9Vb3 (${GATEWAY_KEY})`;
  const ERROR_EVENT = `data: ${JSON.stringify({ error: { code: "upstream_error", message: "the model gateway reported an error mid-stream" } })}\n\n`;
  const logLines: string[] = [];
  let fake: FakeUpstream;
  let server: TestServer;
  beforeAll(async () => {
    fake = startFakeUpstream({ reply: "one two three" });
    server = await startTestServer({
      env: { LLM_GATEWAY_URL: fake.url, LLM_GATEWAY_API_KEY: GATEWAY_KEY },
      overrides: { logLevel: "debug" },
      log: createLogger("debug", (line) => logLines.push(line)),
    });
  });
  afterAll(async () => {
    await server.destroy();
    fake.stop();
  });

  const ask = async (stream: boolean) => {
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer mock-token-alice", "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "x" }], memory: { enabled: false }, stream }),
    });
    return { status: response.status, text: await response.text() };
  };
  const streamWith = async (raw: string) => {
    fake.streamRaw = raw;
    try {
      return await ask(true);
    } finally {
      fake.streamRaw = null;
    }
  };
  const leaked = (text: string) => secrets.filter((secret) => text.includes(secret));

  test("a plain-text error event, the older {object: error} shape, non-JSON data and a JSON that is no chunk become the spec's error event; the log has them redacted", async () => {
    const shapes = [
      `event: error\ndata: ${leaky}\n\n`,
      `data: ${JSON.stringify({ object: "error", message: leaky, type: "internal_error", code: 500 })}\n\n`,
      `data: <html>502 Bad Gateway ${leaky}</html>\n\n`,
      `data: ${JSON.stringify({ detail: leaky })}\n\n`,
      `event: upstream-debug\ndata: ${JSON.stringify({ choices: [], note: leaky })}\n\n`,
    ];
    for (const raw of shapes) {
      const before = logLines.length;
      const { status, text } = await streamWith(raw);
      expect([status, leaked(text), text.split(ERROR_EVENT).length - 1, text.endsWith("data: [DONE]\n\n")]).toEqual([
        200,
        [],
        1,
        true,
      ]);
      const logged = logLines.slice(before).filter((line) => line.includes("mid-stream"));
      expect([logged.length, leaked(logged.join("\n")).filter((s) => s !== "10.20.30.40")]).toEqual([1, []]);
    }
  });

  test("SSE comments never reach the caller: alone they become a bare keepalive, beside a chunk they are dropped; the reply is whole", async () => {
    const chunk = {
      id: "c",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      choices: [{ index: 0, delta: { content: "zero " }, finish_reason: null }],
    };
    const { status, text } = await streamWith(
      `: proxied by ${leaky}\n\n: ${leaky}\ndata: ${JSON.stringify(chunk)}\n\n`,
    );
    expect([status, leaked(text), text.includes(ERROR_EVENT)]).toEqual([200, [], false]);
    const contents = text
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .map((e) => JSON.parse(e.slice(6)).choices[0]?.delta?.content ?? "")
      .join("");
    expect(contents).toBe("zero one two three");
    expect(
      text.startsWith(
        `data: ${JSON.stringify({ id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1_700_000_000, model: "llama3.2", choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] })}\n\n:\n\n`,
      ),
    ).toBe(true);
  });

  test("a 200 reply that is no completion object is answered 502 with a generic message", async () => {
    for (const raw of [JSON.stringify({ object: "error", message: leaky }), `internal error at ${leaky}`]) {
      fake.rawReply = raw;
      try {
        const { status, text } = await ask(false);
        expect([status, JSON.parse(text)]).toEqual([
          502,
          {
            error: { code: "upstream_error", message: "the model gateway answered something that is not a completion" },
          },
        ]);
      } finally {
        fake.rawReply = null;
      }
    }
    expect(
      leaked(logLines.filter((line) => line.includes("not a completion")).join("\n")).filter(
        (s) => s !== "10.20.30.40",
      ),
    ).toEqual([]);
  });
});
