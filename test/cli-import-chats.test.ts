import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliDataDirs, killSpawnedServers, runCli, spawnServer } from "./helpers/cli";
import { startFakeUpstream } from "./helpers/fake-upstream";
import { waitUntil } from "./helpers/wait";
import { zipArchive } from "./helpers/zip";

afterEach(killSpawnedServers);
const { root, dataDir } = cliDataDirs("mnemo-cli-import-chats-");
const fake = startFakeUpstream({ memoryModel: true });
afterAll(() => fake.stop());
const GATEWAY = { LLM_GATEWAY_URL: fake.url, MNEMO_MEMORY_MODEL: "memory-model", MNEMO_EXTRACTION_RETRY_MS: "0" };

const FIXTURES = join(import.meta.dir, "fixtures", "chat-exports");
const CHATGPT = join(FIXTURES, "chatgpt-conversations.json");
const CLAUDE = join(FIXTURES, "claude-conversations.json");

function write(name: string, data: string | Uint8Array): string {
  const path = join(root, name);
  writeFileSync(path, data);
  return path;
}

const importJson = async (args: string[], env: Record<string, string> = {}) => {
  const result = await runCli(["import", ...args, "--json"], env);
  return { exitCode: result.exitCode, report: JSON.parse(result.stdout || "null"), stderr: result.stderr };
};

/** `GET` as `user` on a spawned server (mock tokens). */
const get = async (url: string, path: string, user = "alice") =>
  (await fetch(url + path, { headers: { authorization: `Bearer mock-token-${user}` } })).json() as Promise<any>;

/** Every thread of a workspace with its messages, as the API answers them. */
async function threadsOf(url: string, ws: string) {
  const threads = await get(url, `/v1/workspaces/${ws}/chats?limit=100`);
  return Promise.all(
    threads.map(async (t: any) => ({
      title: t.title,
      messageCount: t.messageCount,
      metadata: t.metadata,
      createdAt: t.createdAt,
      messages: (await get(url, `/v1/workspaces/${ws}/chats/${t.id}/messages?limit=100`)).map((m: any) => [
        m.role,
        m.content,
        m.createdAt,
      ]),
    })),
  );
}

describe("mnemo import: ChatGPT's export", () => {
  test("each conversation becomes a thread: the visible branch only, no system, hidden or tool messages; a re-run adds nothing", async () => {
    const data = dataDir("chatgpt");
    const first = await importJson([CHATGPT, "--user", "alice", "--data", data]);
    const ws: string = first.report.workspaceId;
    expect(first).toEqual({
      exitCode: 0,
      stderr: expect.any(String),
      report: {
        format: "chatgpt-export",
        read: 2,
        inserted: 2,
        existing: 0,
        failed: 0,
        problems: [],
        byType: { chat_thread: 2, chat_message: 6 },
        queued: 6,
        workspaceId: expect.stringMatching(/^ws_chatgpt_/),
        extractionJobs: 0,
      },
    });
    const again = await importJson([CHATGPT, "--user", "alice", "--data", data]);
    expect(again.report).toMatchObject({ inserted: 0, existing: 2, failed: 0, byType: {}, queued: 0, workspaceId: ws });

    const server = await spawnServer(["--data", data, "--allow-mock-tokens"]);
    expect((await get(server.url, `/v1/workspaces/${ws}`)).workspace.name).toBe("ChatGPT import");
    const at = (seconds: number) => new Date((1714550000 + seconds) * 1000).toISOString();
    expect(await threadsOf(server.url, ws)).toEqual([
      {
        title: "Moving to Porto",
        messageCount: 4,
        createdAt: at(0),
        metadata: { importedFrom: "chatgpt", conversationId: "6650a1b2-0000-4000-8000-000000000001" },
        messages: [
          ["user", "We are moving to Porto in March.", at(10)],
          ["assistant", "Congratulations on the move!", at(30)],
          ["user", "I quit coffee last year. Tea only now.", at(60)],
          ["assistant", "Noted: tea only. Porto has lovely tea shops.", at(90)],
        ],
      },
      {
        title: "My sister Ana lives in Lisbon.",
        messageCount: 2,
        createdAt: at(3600),
        metadata: { importedFrom: "chatgpt", conversationId: "6650a1b2-0000-4000-8000-000000000002" },
        messages: [
          ["user", "My sister Ana lives in Lisbon.", at(3610)],
          ["assistant", "Lisbon is close to Porto.", at(3620)],
        ],
      },
    ]);
    // Bob importing the same export gets threads of his own; Alice's are not his.
    const bob = await importJson([CHATGPT, "--user", "bob", "--data", data]);
    expect(bob.report).toMatchObject({ inserted: 2, existing: 0 });
    expect(bob.report.workspaceId).not.toBe(ws);
    expect((await get(server.url, `/v1/workspaces/${ws}/chats`, "bob")).error.code).toBe("not_found");
  });

  test("a conversation continued since the last export gets only its new messages, in the workspace it went to first", async () => {
    const data = dataDir("chatgpt-continued");
    const conversations = JSON.parse(readFileSync(CHATGPT, "utf8"));
    const short = structuredClone(conversations);
    short[1].mapping.v1.children = [];
    delete short[1].mapping.w1;
    short[1].current_node = "v1";
    expect(
      (await importJson([write("short.json", JSON.stringify(short)), "--user", "alice", "--data", data])).report.byType,
    ).toEqual({ chat_thread: 2, chat_message: 5 });
    const longer = await importJson([CHATGPT, "--user", "alice", "--data", data, "--workspace", "ws_elsewhere"]);
    expect(longer.report).toMatchObject({ inserted: 0, existing: 2, byType: { chat_message: 1 } });
    const server = await spawnServer(["--data", data, "--allow-mock-tokens"]);
    const threads = await threadsOf(
      server.url,
      (await importJson([CHATGPT, "--user", "alice", "--data", data])).report.workspaceId,
    );
    expect(threads.map((t) => [t.messageCount, t.messages.length])).toEqual([
      [4, 4],
      [2, 2],
    ]);
    expect(await get(server.url, "/v1/workspaces/ws_elsewhere/chats")).toEqual([]);
  });
});

describe("mnemo import: Claude's export, in its zip", () => {
  test("text blocks only; titles from the name or the first message; --workspace holds the threads; idempotent", async () => {
    const data = dataDir("claude");
    const zip = write(
      "claude-export.zip",
      zipArchive([
        { name: "users.json", data: "[]" },
        { name: "projects.json", data: "[]" },
        { name: "conversations.json", data: readFileSync(CLAUDE) },
      ]),
    );
    const human = await runCli(["import", zip, "--user", "alice", "--workspace", "ws_claude_history", "--data", data]);
    // Progress off a terminal is plain lines on stderr (a bar redrawn in place on one).
    expect({ exitCode: human.exitCode, stderr: human.stderr, stdout: human.stdout }).toEqual({
      exitCode: 0,
      stderr: "importing 100% (2/2)\n",
      stdout:
        "imported 2 new conversations (2 chat threads, 4 chat messages), 0 already present, 0 failed of 2 read (Claude export, workspace ws_claude_history)\n" +
        "4 sources queued for the search index; a running server (or the next mnemo serve) indexes them\n",
    });
    expect(
      (await importJson([zip, "--user", "alice", "--workspace", "ws_claude_history", "--data", data])).report,
    ).toMatchObject({ inserted: 0, existing: 2, queued: 0 });
    const server = await spawnServer(["--data", data, "--allow-mock-tokens"]);
    const threads = await threadsOf(server.url, "ws_claude_history");
    expect(threads.map((t) => [t.title, t.messages.map(([role, content]: string[]) => [role, content])])).toEqual([
      [
        "Garden plans",
        [
          ["user", "I grow tomatoes on my balcony."],
          ["assistant", "Tomatoes love sun."],
        ],
      ],
      [
        "My cat is called Miso.",
        [
          ["user", "My cat is called Miso."],
          ["assistant", "Miso is a great name."],
        ],
      ],
    ]);
    expect(threads[0].createdAt).toBe("2025-03-01T09:00:00.000Z");
  });
});

describe("mnemo import: a bad or oversized export fails in one line, writing nothing", () => {
  const huge = " ".repeat(4_000_000);
  test.each([
    [
      "no-conversations.zip",
      zipArchive([{ name: "users.json", data: "[]" }]),
      "a zip archive without conversations.json; import ChatGPT's or Claude's data export (the zip or its conversations.json)",
    ],
    [
      "bomb.zip",
      zipArchive([{ name: "conversations.json", data: `[${huge}]` }]),
      /^conversations\.json expands \d+-fold; the limit is 200$/,
    ],
    [
      "liar.zip",
      zipArchive([
        { name: "conversations.json", data: JSON.stringify([{ uuid: "x", chat_messages: [] }]), declaredSize: 10 },
      ]),
      "conversations.json does not decompress to its declared 10 bytes",
    ],
    [
      "broken.zip",
      zipArchive([{ name: "data/conversations.json", data: '[{"mapping": ' }]),
      /^conversations\.json is not JSON \(/,
    ],
    [
      "other.zip",
      zipArchive([{ name: "conversations.json", data: '[{"title": "x"}]' }]),
      'conversations.json is neither ChatGPT\'s export (a list with "mapping") nor Claude\'s (a list with "chat_messages")',
    ],
    [
      "truncated.zip",
      zipArchive([{ name: "conversations.json", data: "[]" }]).subarray(0, 40),
      "not a zip archive (no end of central directory)",
    ],
  ] as const)("%s", async (name, bytes, message) => {
    const data = dataDir(`bad-${name}`);
    const path = write(name, bytes);
    const result = await runCli(["import", path, "--user", "alice", "--data", data]);
    const prefix = `mnemo: ${path}: `;
    const line = result.stderr.trimEnd();
    expect({
      exitCode: result.exitCode,
      stdout: result.stdout,
      lines: line.split("\n").length,
      prefix: line.slice(0, prefix.length),
    }).toEqual({ exitCode: 1, stdout: "", lines: 1, prefix });
    if (typeof message === "string") expect(line.slice(prefix.length)).toBe(message);
    else expect(line.slice(prefix.length)).toMatch(message);
  });

  test("a conversation that cannot be read is named; the others go in (exit 3)", async () => {
    const data = dataDir("bad-conversation");
    const conversations = JSON.parse(readFileSync(CLAUDE, "utf8"));
    const path = write(
      "partly-bad.json",
      JSON.stringify([conversations[0], { ...conversations[1], uuid: 42 }, "nonsense"]),
    );
    const result = await importJson([path, "--user", "alice", "--data", data]);
    expect([result.exitCode, result.report.inserted, result.report.problems]).toEqual([
      3,
      1,
      [
        { place: "conversations[1]", message: "uuid: is required (a string)" },
        { place: "conversations[2]", message: "expected a JSON object" },
      ],
    ]);
  });

  test("--extract, --dry-run and --limit name themselves on a file that is not a chat export; --extract where extraction is off", async () => {
    const path = write("memories.jsonl", `${JSON.stringify({ content: "a memory" })}\n`);
    for (const flag of ["--extract", "--dry-run"]) {
      const result = await runCli(["import", path, "--user", "alice", flag, "--data", dataDir(`flag${flag}`)]);
      expect({ exitCode: result.exitCode, stderr: result.stderr }).toEqual({
        exitCode: 1,
        stderr: `mnemo: ${flag}: applies to ChatGPT's or Claude's export; ${path} is not one\n`,
      });
    }
    const proxy = await runCli(["import", CLAUDE, "--user", "alice", "--extract", "--data", dataDir("proxy-mode")], {
      MNEMO_PROXY_ENCRYPTION: "1",
    });
    expect({ exitCode: proxy.exitCode, stderr: proxy.stderr }).toEqual({
      exitCode: 1,
      stderr: expect.stringMatching(
        /^mnemo: --extract: memory extraction is off in reverse-proxy encryption mode .*MNEMO_EXTRACTION_IN_PROXY_MODE=1\n$/,
      ),
    });
    const limit = await runCli(["import", CLAUDE, "--user", "alice", "--limit", "0", "--data", dataDir("limit-0")]);
    expect({ exitCode: limit.exitCode, stderr: limit.stderr }).toEqual({
      exitCode: 1,
      stderr: "mnemo: --limit: must be a whole number of at least 1\n",
    });
  });
});

describe("mnemo import --extract: memories formed by the server's extraction jobs", () => {
  test("jobs are queued with the threads, once; the server forms the user's memories from them", async () => {
    const data = dataDir("extract");
    const first = await importJson([CLAUDE, "--user", "alice", "--extract", "--data", data]);
    expect(first.report).toMatchObject({ inserted: 2, extractionJobs: 2 });
    const rerun = await runCli(["import", CLAUDE, "--user", "alice", "--extract", "--data", data]);
    expect(rerun.stdout).toContain("no extraction job queued: every message was queued before\n");

    const server = await spawnServer(["--data", data, "--allow-mock-tokens"], GATEWAY);
    const jobs = await waitUntil(
      () => get(server.url, "/v1/memories/extract/jobs"),
      (body) => body.data.every((j: any) => j.status === "done"),
      { what: "the extraction jobs" },
    );
    expect(jobs.data.length).toBe(2);
    const memories = await get(server.url, "/v1/memories?limit=100");
    expect(memories.data.map((m: any) => [m.content, m.workspaceId, m.metadata.source]).sort()).toEqual([
      ["I grow tomatoes on my balcony.", null, "extraction"],
      ["My cat is called Miso.", null, "extraction"],
    ]);
  });

  test("--dry-run --extract --limit 1 shows what the first conversation would form, and writes nothing", async () => {
    const data = dataDir("dry-run");
    const result = await runCli(
      ["import", CHATGPT, "--user", "alice", "--dry-run", "--extract", "--limit", "1", "--data", data],
      GATEWAY,
    );
    expect({ exitCode: result.exitCode, stdout: result.stdout }).toEqual({
      exitCode: 0,
      stdout:
        "would import 1 conversation (4 messages) of 2 read (ChatGPT export); nothing was written\n\n" +
        "Moving to Porto (4 messages)\n  + We are moving to Porto in March.\n  + I quit coffee last year.\n  + Tea only now.\n",
    });
    const json = await importJson([CHATGPT, "--user", "alice", "--dry-run", "--extract", "--data", data], GATEWAY);
    expect(json.report.extraction.map((c: any) => [c.title, c.facts])).toEqual([
      ["Moving to Porto", ["We are moving to Porto in March.", "I quit coffee last year.", "Tea only now."]],
      ["My sister Ana lives in Lisbon.", ["My sister Ana lives in Lisbon."]],
    ]);
    const server = await spawnServer(["--data", data, "--allow-mock-tokens"]);
    expect([
      (await get(server.url, "/v1/memories")).data,
      (await get(server.url, "/v1/memories/extract/jobs")).data,
    ]).toEqual([[], []]);
    // The calls were metered to the user, as extraction's are.
    expect((await get(server.url, "/v1/usage")).usage.requestCount).toBe(6);
  });
});
