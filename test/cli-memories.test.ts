import { waitFor } from "./helpers/wait";
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { startFakeEmbedder } from "./helpers/fake-embedder";
import { cliDataDirs, killSpawnedServers, runCli, spawnServer } from "./helpers/cli";

afterEach(killSpawnedServers);
const { dataDir } = cliDataDirs("mnemo-cli-memories-");

/** `mnemo …` with `--data`; `json` parses stdout. */
const cli = async (data: string, args: string[], env: Record<string, string> = {}) => {
  const result = await runCli([...args, "--data", data], env);
  let json: any = null;
  try {
    json = JSON.parse(result.stdout);
  } catch {
    json = null;
  }
  return { ...result, json };
};

/** `[status, body]` of a JSON request to a spawned server as `user` (mock tokens). */
const client =
  (url: string) =>
  async (method: string, path: string, user: string, body?: unknown): Promise<[number, any]> => {
    const response = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer mock-token-${user}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return [response.status, await response.json()];
  };

/** An expected failure: exit 1 and exactly one line on stderr, with no stack trace. */
function expectOneLineError(result: { exitCode: number; stderr: string; stdout: string }, text: string | RegExp) {
  expect(result.exitCode).toBe(1);
  const lines = result.stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(
    typeof text === "string" ? new RegExp(`^mnemo: ${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`) : text,
  );
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.stdout).toBe("");
}

const MEMORY_RECORD = {
  id: expect.stringMatching(/^mem_/),
  ownerId: "alice",
  projectId: "default",
  content: expect.any(String),
  metadata: expect.any(Object),
  status: "active",
  workspaceId: null,
  session_id: null,
  createdAt: expect.any(String),
  updatedAt: expect.any(String),
};

describe("mnemo remember / recall / memories, no server running", () => {
  test("remember then recall finds it, ranked with scores; list, show and forget; the --json shapes are the API's", async () => {
    const data = dataDir("journey");
    const tea = await cli(data, [
      "remember",
      "Alice prefers green tea in the morning",
      "--user",
      "alice",
      "--metadata",
      '{"source":"terminal"}',
      "--json",
    ]);
    expect(tea.exitCode).toBe(0);
    expect(tea.json).toEqual({
      ...MEMORY_RECORD,
      content: "Alice prefers green tea in the morning",
      metadata: { source: "terminal" },
    });
    const plain = await cli(data, ["remember", "Alice plays the cello on Sundays", "--user", "alice"]);
    expect(plain.exitCode).toBe(0);
    const celloId = plain.stdout.trim();
    expect(celloId).toMatch(/^mem_\w+$/);

    const recalled = await cli(data, ["recall", "green tea", "--user", "alice", "--json"]);
    expect(recalled.exitCode).toBe(0);
    expect(recalled.json).toEqual({
      results: expect.any(Array),
      data: expect.any(Array),
      mode: expect.any(String),
      strategy: expect.any(String),
      signals: expect.any(Array),
    });
    expect(recalled.json.results[0]).toEqual({
      ...MEMORY_RECORD,
      id: tea.json.id,
      content: tea.json.content,
      metadata: { source: "terminal" },
      score: expect.any(Number),
      signals: expect.any(Object),
    });
    expect(recalled.json.results.filter((r: { id: string }) => r.id === tea.json.id)).toHaveLength(1);
    // Ranked, for people: rank, score, id and the text on one line.
    const human = await cli(data, ["recall", "cello", "--user", "alice"]);
    expect(human.stdout).toMatch(new RegExp(`^ 1\\. \\d\\.\\d{3}  ${celloId}  Alice plays the cello on Sundays\\n`));

    const list = await cli(data, ["memories", "list", "--user", "alice", "--json"]);
    expect(list.json).toEqual({
      data: [expect.objectContaining({ id: celloId }), expect.objectContaining({ id: tea.json.id })],
      nextCursor: null,
      hasMore: false,
    });
    const page = await cli(data, ["memories", "list", "--user", "alice", "--limit", "1", "--json"]);
    const cursor = page.json.nextCursor;
    expect([page.json.data.map((m: { id: string }) => m.id), page.json.hasMore, typeof cursor]).toEqual([
      [celloId],
      true,
      "string",
    ]);
    const next = await cli(data, ["memories", "list", "--user", "alice", "--limit", "1", "--cursor", cursor, "--json"]);
    expect(next.json).toMatchObject({ data: [{ id: tea.json.id }], hasMore: false });
    const table = await cli(data, ["memories", "list", "--user", "alice"]);
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+CREATED\s+WORKSPACE\s+CONTENT$/);
    expect(table.stdout).toContain("Alice plays the cello on Sundays");

    const shown = await cli(data, ["memories", "show", tea.json.id, "--user", "alice", "--json"]);
    expect(shown.json).toEqual(tea.json);
    const shownHuman = await cli(data, ["memories", "show", tea.json.id, "--user", "alice"]);
    expect(shownHuman.stdout).toContain(`id        ${tea.json.id}\n`);
    expect(shownHuman.stdout).toEndWith("\nAlice prefers green tea in the morning\n");

    const forgot = await cli(data, ["memories", "forget", tea.json.id, "--user", "alice", "--json"]);
    expect([forgot.exitCode, forgot.json]).toEqual([0, [{ id: tea.json.id, deleted: true, success: true }]]);
    const after = await cli(data, ["recall", "green tea", "--user", "alice", "--json"]);
    expect(after.json.results.map((r: { id: string }) => r.id)).not.toContain(tea.json.id);
    expectOneLineError(
      await cli(data, ["memories", "show", tea.json.id, "--user", "alice"]),
      `memory '${tea.json.id}' not found`,
    );
    // Several ids: each on its own; the unknown one is named and the command exits 1.
    const mixed = await cli(data, ["memories", "forget", celloId, "mem_nope", "--user", "alice"]);
    expect([mixed.exitCode, mixed.stdout, mixed.stderr.trim()]).toEqual([
      1,
      `forgot ${celloId}\n`,
      "mnemo: memory 'mem_nope' not found",
    ]);
    expect((await cli(data, ["memories", "list", "--user", "alice", "--json"])).json.data).toEqual([]);
  });

  test("isolation: another user's recall, list, show and forget never see the memory, and answer as for a missing one", async () => {
    const data = dataDir("isolation");
    const secret = await cli(data, ["remember", "Alice's locker code is 4512", "--user", "alice", "--json"]);
    const id = secret.json.id;
    const recall = await cli(data, ["recall", "locker code", "--user", "bob", "--json"]);
    expect([recall.exitCode, recall.json.results]).toEqual([0, []]);
    expect((await cli(data, ["memories", "list", "--user", "bob", "--json"])).json.data).toEqual([]);
    const showOthers = await cli(data, ["memories", "show", id, "--user", "bob"]);
    const showMissing = await cli(data, ["memories", "show", "mem_01NOTHERE", "--user", "bob"]);
    expectOneLineError(showOthers, `memory '${id}' not found`);
    expect(showOthers.stderr.replace(id, "X")).toBe(showMissing.stderr.replace("mem_01NOTHERE", "X"));
    const forgetOthers = await cli(data, ["memories", "forget", id, "--user", "bob", "--json"]);
    expect([forgetOthers.exitCode, forgetOthers.json]).toEqual([
      1,
      [{ id, error: { code: "not_found", message: `memory '${id}' not found` } }],
    ]);
    // Still Alice's, untouched and found.
    expect((await cli(data, ["memories", "show", id, "--user", "alice", "--json"])).json.content).toBe(
      "Alice's locker code is 4512",
    );
    expect(
      (await cli(data, ["recall", "locker code", "--user", "alice", "--json"])).json.results.map(
        (r: { id: string }) => r.id,
      ),
    ).toEqual([id]);
    // MNEMO_USER is the default user; --user wins over it.
    expect(
      (await cli(data, ["memories", "list", "--json"], { MNEMO_USER: "alice" })).json.data.map(
        (m: { id: string }) => m.id,
      ),
    ).toEqual([id]);
    expect(
      (await cli(data, ["memories", "list", "--user", "bob", "--json"], { MNEMO_USER: "alice" })).json.data,
    ).toEqual([]);
  });

  test("--timestamp sets the memory's time (ISO 8601 or Unix seconds), and the list is ordered by it", async () => {
    const data = dataDir("timestamp");
    const iso = await cli(data, [
      "remember",
      "The team moved to Lisbon",
      "--user",
      "alice",
      "--timestamp",
      "2024-05-01T09:30:00+02:00",
      "--json",
    ]);
    expect(iso.json.createdAt).toBe("2024-05-01T07:30:00.000Z");
    const unix = await cli(data, [
      "remember",
      "The first release shipped",
      "--user",
      "alice",
      "--timestamp",
      "1700000000",
      "--json",
    ]);
    expect(unix.json.createdAt).toBe("2023-11-14T22:13:20.000Z");
    const now = await cli(data, ["remember", "Today's note", "--user", "alice", "--json"]);
    const list = await cli(data, ["memories", "list", "--user", "alice", "--json"]);
    expect(list.json.data.map((m: { id: string }) => m.id)).toEqual([now.json.id, iso.json.id, unix.json.id]);
    for (const bad of ["yesterday", "2024-02-31", "-5"]) {
      expectOneLineError(
        await cli(data, ["remember", "x", "--user", "alice", "--timestamp", bad]),
        "--timestamp: must be an ISO 8601",
      );
    }
    expect((await cli(data, ["memories", "list", "--user", "alice", "--json"])).json.data).toHaveLength(3);
  });

  test("workspaces: remember into one, list and recall within it; another user's workspace answers like a missing one", async () => {
    const data = dataDir("workspaces");
    const server = await spawnServer(["--data", data, "--allow-mock-tokens"]);
    const [, ws] = await client(server.url)("POST", "/v1/workspaces", "alice", { name: "team" });
    server.proc.kill("SIGTERM");
    await server.proc.exited;
    const inWs = await cli(data, [
      "remember",
      "Standups are at ten",
      "--user",
      "alice",
      "--workspace",
      ws.id,
      "--json",
    ]);
    expect(inWs.json).toMatchObject({ workspaceId: ws.id, projectId: ws.id });
    await cli(data, ["remember", "Standups used to be at nine", "--user", "alice"]);
    expect(
      (await cli(data, ["memories", "list", "--user", "alice", "--workspace", ws.id, "--json"])).json.data.map(
        (m: { id: string }) => m.id,
      ),
    ).toEqual([inWs.json.id]);
    expect(
      (await cli(data, ["recall", "standups", "--user", "alice", "--workspace", ws.id, "--json"])).json.results.map(
        (m: { id: string }) => m.id,
      ),
    ).toEqual([inWs.json.id]);
    expectOneLineError(
      await cli(data, ["memories", "list", "--user", "bob", "--workspace", ws.id]),
      `workspace '${ws.id}' not found`,
    );
    expectOneLineError(
      await cli(data, ["remember", "sneaky", "--user", "bob", "--workspace", ws.id]),
      `workspace '${ws.id}' not found`,
    );
    expectOneLineError(
      await cli(data, ["memories", "list", "--user", "alice", "--workspace", "ws_missing"]),
      "workspace 'ws_missing' not found",
    );
  });

  test("bad input: one line naming the option or argument, no stack trace, nothing written", async () => {
    const data = dataDir("bad-input");
    expectOneLineError(await cli(data, ["remember", "", "--user", "alice"]), "TEXT: ");
    expectOneLineError(await cli(data, ["remember", "   ", "--user", "alice"]), "TEXT: must not be blank");
    expectOneLineError(
      await cli(data, ["remember", "x".repeat(51_201), "--user", "alice"]),
      "TEXT: is 51201 bytes; the limit is 51200 bytes",
    );
    expectOneLineError(
      await cli(data, ["remember", "x", "--user", "alice", "--metadata", "{nope"]),
      "--metadata: is not valid JSON",
    );
    expectOneLineError(await cli(data, ["remember", "x", "--user", "alice", "--metadata", "[1,2]"]), "--metadata: ");
    expectOneLineError(await cli(data, ["remember", "x", "--user", "  "]), "--user: must not be empty");
    for (const limit of ["0", "abc", "101", "2.5"])
      expectOneLineError(await cli(data, ["recall", "x", "--user", "alice", "--limit", limit]), "--limit: ");
    for (const limit of ["0", "abc", "1001"])
      expectOneLineError(
        await cli(data, ["memories", "list", "--user", "alice", "--limit", limit]),
        "--limit: must be an integer between 1 and 1000",
      );
    expectOneLineError(await cli(data, ["memories", "list", "--user", "alice", "--cursor", "garbage"]), "--cursor: ");
    // A failed command ends by itself, so the index's native objects remove their temp dirs.
    const tmp = join(dataDir("bad-input-tmp"), "tmp");
    mkdirSync(tmp, { recursive: true });
    expectOneLineError(
      await cli(data, ["memories", "show", "mem_unknown", "--user", "alice"], { TMPDIR: tmp }),
      "memory 'mem_unknown' not found",
    );
    expect(readdirSync(tmp)).toEqual([]);
    expectOneLineError(
      await cli(data, ["memories", "forget", "mem_unknown", "--user", "alice"]),
      "memory 'mem_unknown' not found",
    );
    // No user at all: commander names the option.
    const noUser = await runCli(["memories", "list", "--data", data]);
    expect(noUser.exitCode).toBe(1);
    expect(noUser.stderr).toContain("--user");
    expect((await cli(data, ["memories", "list", "--user", "alice", "--json"])).json.data).toEqual([]);
  });

  test("--help of every memory command ends with examples; colours only on a terminal", async () => {
    for (const command of [
      ["remember"],
      ["recall"],
      ["memories"],
      ["memories", "list"],
      ["memories", "show"],
      ["memories", "forget"],
    ]) {
      const help = await runCli([...command, "--help"]);
      expect(help.exitCode).toBe(0);
      expect(help.stdout).toMatch(/\nExamples?:\n {2}mnemo (remember|recall|memories) /);
    }
    const data = dataDir("colours");
    await cli(data, ["remember", "Colourful memory about tea", "--user", "alice"]);
    for (const args of [
      ["recall", "tea", "--user", "alice"],
      ["memories", "list", "--user", "alice"],
    ]) {
      const piped = await cli(data, args);
      expect(piped.stdout).toContain("tea");
      expect(piped.stdout + piped.stderr).not.toContain("\x1b[");
      // The same command, told it may colour: it does (so the check above means something).
      expect((await cli(data, args, { FORCE_COLOR: "1" })).stdout).toContain("\x1b[");
    }
  });

  test("stored text cannot drive the terminal: control characters are shown, not sent; --json escapes them", async () => {
    const data = dataDir("escapes");
    const hostile = "Tea notes \x1b]0;owned\x07\x1b[2J\x1b[31mred\rover\nsecond line";
    const stored = await cli(data, ["remember", hostile, "--user", "alice", "--json"]);
    expect(stored.json.content).toBe(hostile);
    expect(stored.stdout).not.toContain("\x1b");
    for (const args of [
      ["recall", "tea notes", "--user", "alice"],
      ["memories", "list", "--user", "alice"],
      ["memories", "show", stored.json.id, "--user", "alice"],
    ]) {
      const shown = await cli(data, args, { FORCE_COLOR: "0" });
      expect(shown.stdout).toContain("Tea notes ␛]0;owned␇␛[2J␛[31mred");
      expect(shown.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
    }
    expect((await cli(data, ["memories", "show", stored.json.id, "--user", "alice"])).stdout).toEndWith(
      "␍over\nsecond line\n",
    );
  });
});

describe("mnemo recall with an embedder and no server", () => {
  test("a memory remembered just before is found by meaning alone: the recall makes its vector first", async () => {
    const embedder = startFakeEmbedder(64);
    try {
      const env = { EMBEDDINGS_PROVIDER: "openai", EMBEDDINGS_URL: embedder.url };
      const data = dataDir("semantic");
      const dog = await cli(data, ["remember", "My dog loves the park", "--user", "alice", "--json"], env);
      await cli(data, ["remember", "The invoice is due in March", "--user", "alice"], env);
      // "canine" shares no word with the memory: only its vector can match it.
      const found = await cli(data, ["recall", "canine", "--user", "alice", "--limit", "1", "--json"], env);
      expect([found.exitCode, found.json.results.map((r: { id: string }) => r.id)]).toEqual([0, [dog.json.id]]);
      expect(found.json.strategy).not.toBe("fulltext");
      expect(found.stderr).toBe("");
      // The embedder down: the answer comes at once from the words, and says why vectors are missing.
      embedder.failing = true;
      await cli(data, ["remember", "Our cat sleeps all day", "--user", "alice"], env);
      const words = await cli(data, ["recall", "cat", "--user", "alice", "--json"], env);
      expect(words.json.results[0].content).toBe("Our cat sleeps all day");
      expect(words.stderr).toContain(
        "vectors unavailable (embeddings endpoint answered 503): memories are found by their words only\n",
      );
    } finally {
      embedder.stop();
    }
  });
});

describe("mnemo remember / recall / memories with a server running on the same data dir", () => {
  test("a memory remembered by the CLI is found by the server's search and the other way round, each stored and indexed once", async () => {
    const data = dataDir("with-server");
    const server = await spawnServer(["--data", data, "--allow-mock-tokens"]);
    const api = client(server.url);
    const fromCli = await cli(data, ["remember", "Carol keeps bees on her roof", "--user", "carol", "--json"]);
    expect(fromCli.exitCode).toBe(0);
    const [status, found] = await api("POST", "/v1/memories/search", "carol", { query: "bees roof" });
    expect(status).toBe(200);
    expect(found.results.map((r: { id: string }) => r.id)).toEqual([fromCli.json.id]);

    const [created, fromApi] = await api("POST", "/v1/memories", "carol", {
      content: "Carol's bees make lavender honey",
    });
    expect(created).toBe(201);
    const recalled = await cli(data, ["recall", "lavender honey", "--user", "carol", "--json"]);
    expect(recalled.json.results.filter((r: { id: string }) => r.id === fromApi.id)).toHaveLength(1);
    expect(recalled.json.results[0].id).toBe(fromApi.id);

    // Nothing double-written: the server lists exactly the two, and each is one hit.
    const [, listed] = await api("GET", "/v1/memories", "carol");
    expect(listed.data.map((m: { id: string }) => m.id).sort()).toEqual([fromCli.json.id, fromApi.id].sort());
    const [, both] = await api("POST", "/v1/memories/search", "carol", { query: "bees", limit: 10 });
    expect(both.results.map((r: { id: string }) => r.id).sort()).toEqual([fromCli.json.id, fromApi.id].sort());
    // Another user sees none of it, through either door.
    expect((await cli(data, ["recall", "bees", "--user", "dave", "--json"])).json.results).toEqual([]);
    expect((await api("POST", "/v1/memories/search", "dave", { query: "bees" }))[1].results).toEqual([]);

    // Forgotten by the CLI: gone from the server's search.
    expect((await cli(data, ["memories", "forget", fromCli.json.id, "--user", "carol"])).exitCode).toBe(0);
    const [, afterForget] = await api("POST", "/v1/memories/search", "carol", { query: "bees roof" });
    expect(afterForget.results.map((r: { id: string }) => r.id)).not.toContain(fromCli.json.id);
  });

  test("written and recalled with no server, then served: the server finds each memory once, nothing lost or indexed twice", async () => {
    const data = dataDir("server-later");
    const indexed = await cli(data, ["remember", "Erin repairs vintage radios", "--user", "erin", "--json"]);
    // This recall indexes the first memory itself (no server holds the index writer lease).
    expect(
      (await cli(data, ["recall", "vintage radios", "--user", "erin", "--json"])).json.results.map(
        (r: { id: string }) => r.id,
      ),
    ).toEqual([indexed.json.id]);
    // This one stays in the outbox until a server starts.
    const queued = await cli(data, [
      "remember",
      "Erin's radios are mostly from the fifties",
      "--user",
      "erin",
      "--json",
    ]);
    const server = await spawnServer(["--data", data, "--allow-mock-tokens"]);
    const [, found] = await client(server.url)("POST", "/v1/memories/search", "erin", { query: "radios", limit: 10 });
    expect(found.results.map((r: { id: string }) => r.id).sort()).toEqual([indexed.json.id, queued.json.id].sort());
    // The server indexes the queued one itself (its search read it from the store meanwhile).
    const health = await waitFor(
      async () => {
        const [, body] = await client(server.url)("GET", "/health", "erin");
        return body.index?.pending === 0 ? body : null;
      },
      { what: "the server to index the queued memory" },
    );
    expect(health.index.pendingVectors).toBe(0);
  });
});
