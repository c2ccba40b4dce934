import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { encryptString, sealJson } from "../src/crypto/aes-gcm";
import { cliDataDirs, runCli } from "./helpers/cli";
import { callTool, connectMcpHttp, ok } from "./helpers/mcp";
import { all, run, sql } from "../src/db/store";
import { migrate } from "../src/db/migrate";
import { allMigrations } from "../src/migrations";
import { mock, startTestServer, tempDir, type TestServer } from "./helpers/server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.destroy());

const post = async (user: string, body: unknown) => {
  const response = await fetch(`${server.url}/v1/memories`, {
    method: "POST",
    headers: { authorization: `Bearer ${mock(user)}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    duplicate: response.headers.get("x-svc-duplicate"),
    body: (await response.json()) as any,
  };
};
const count = async (user: string) =>
  (await server.call("GET", "/v1/memories?limit=1000", { token: mock(user) }))[1].data.length as number;

describe("the exact-duplicate rule", () => {
  test("the same text once normalised (NFKC, trimmed, whitespace, case) answers 200 with the memory already stored; nothing is written", async () => {
    const first = await post("dup-a", { content: "I prefer  Green tea", metadata: { n: 1 } });
    expect(first.status).toBe(201);
    expect(first.duplicate).toBeNull();
    // Full-width letters (NFKC), other case, extra and leading whitespace.
    const again = await post("dup-a", { content: "  i PREFER\tｇｒｅｅｎ\n tea ", metadata: { n: 2 } });
    expect(again.status).toBe(200);
    expect(again.duplicate).toBe("true");
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.content).toBe("I prefer  Green tea");
    expect(await count("dup-a")).toBe(1);
    // A custom id does not get around it.
    const custom = await post("dup-a", { id: "my-id", content: "i prefer green tea" });
    expect([custom.status, custom.body.id]).toEqual([200, first.body.id]);
    // Different text is a new memory.
    expect((await post("dup-a", { content: "I prefer green tea!" })).status).toBe(201);
    expect(await count("dup-a")).toBe(2);
  });

  test("per user and per workspace: another user, or another workspace, stores its own", async () => {
    expect((await post("dup-b", { content: "Lives in Lisbon" })).status).toBe(201);
    expect((await post("dup-c", { content: "Lives in Lisbon" })).status).toBe(201);
    const [, ws] = await server.call("POST", "/v1/workspaces", { token: mock("dup-b"), body: { name: "w" } });
    expect((await post("dup-b", { content: "lives in lisbon", workspaceId: ws.id })).status).toBe(201);
    expect((await post("dup-b", { content: "LIVES IN LISBON", workspace_id: ws.id })).status).toBe(200);
    expect(await count("dup-b")).toBe(2);
    expect(await count("dup-c")).toBe(1);
  });

  test("concurrent writes of the same text store one row", async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) => post("dup-race", { content: `Race fact${i % 2 ? " " : ""}` })),
    );
    expect(outcomes.filter((o) => o.status === 201)).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 200)).toHaveLength(11);
    expect(new Set(outcomes.map((o) => o.body.id)).size).toBe(1);
    expect(await count("dup-race")).toBe(1);
  });

  test("client-encrypted content is exempt (ciphertext cannot be normalised)", async () => {
    const key = randomBytes(32);
    const ciphertext = encryptString("same secret", key);
    const a = await post("dup-enc", { content: ciphertext });
    const b = await post("dup-enc", { content: ciphertext });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.id).not.toBe(b.body.id);
    const envelope = JSON.stringify(sealJson("same secret", key));
    expect((await post("dup-enc", { content: envelope })).status).toBe(201);
    expect((await post("dup-enc", { content: envelope })).status).toBe(201);
  });

  test("MCP remember: a duplicate answers the stored memory", async () => {
    const { client } = await connectMcpHttp(server.url, mock("dup-mcp"));
    try {
      const one = ok(await callTool(client, "remember", { content: "Deploys on Fridays" }));
      const two = ok(await callTool(client, "remember", { content: "deploys on fridays" }));
      expect(two.id).toBe(one.id);
      expect(await count("dup-mcp")).toBe(1);
    } finally {
      await client.close();
    }
  });
});

describe("history", () => {
  test("created and deleted versions with their source; another user learns nothing", async () => {
    const created = await post("hist-a", { content: "Has a cat named Miso", metadata: { k: "v" } });
    const [status, history] = await server.call("GET", `/v1/memories/${created.body.id}/history`, {
      token: mock("hist-a"),
    });
    expect(status).toBe(200);
    expect(history.data).toEqual([
      {
        version: 1,
        event: "created",
        reason: "created",
        content: "Has a cat named Miso",
        metadata: { k: "v" },
        workspaceId: null,
        changedAt: created.body.createdAt,
        source: "api",
      },
    ]);
    // Another user: the same 404 as for a memory that does not exist.
    const [otherStatus, other] = await server.call("GET", `/v1/memories/${created.body.id}/history`, {
      token: mock("hist-b"),
    });
    expect([otherStatus, other.error.code]).toEqual([404, "not_found"]);
    expect((await server.call("GET", `/v1/memories/nope/history`, { token: mock("hist-b") }))[0]).toBe(404);
    await server.call("DELETE", `/v1/memories/${created.body.id}`, { token: mock("hist-a") });
    const [, after] = await server.call("GET", `/v1/memories/${created.body.id}/history`, { token: mock("hist-a") });
    // A delete by the user erases the text from the history too: only that it was deleted remains.
    expect(after.data.map((v: any) => [v.event, v.content, v.source])).toEqual([["deleted", "", "api"]]);
    expect((await server.call("DELETE", `/v1/memories/${created.body.id}`, { token: mock("hist-a") }))[0]).toBe(404);
    // Deleted, the text may be stored again.
    expect((await post("hist-a", { content: "has a cat named miso" })).status).toBe(201);
  });
  test("a memory's text is stored once: its newest version reads the memory's, each earlier one keeps its own; an upgraded store gives up its copies", async () => {
    const user = mock("hist-once");
    const created = await post("hist-once", { content: "Owns a bike painted teal", metadata: { a: 1 } });
    const id = created.body.id as string;
    const patch = (body: unknown) => server.call("PATCH", `/v1/memories/${id}`, { token: user, body });
    expect((await patch({ content: "Owns a bike painted orange" }))[0]).toBe(200);
    expect((await patch({ metadata: { a: 2 } }))[0]).toBe(200);
    const history = async () =>
      (await server.call("GET", `/v1/memories/${id}/history`, { token: user }))[1].data.map((v: any) => [
        v.event,
        v.content,
        v.metadata,
      ]);
    const said = [
      ["created", "Owns a bike painted teal", { a: 1 }],
      ["updated", "Owns a bike painted orange", { a: 1 }],
      ["updated", "Owns a bike painted orange", { a: 2 }],
    ];
    expect(await history()).toEqual(said);
    const stored = () =>
      all<{ event: string; content: string | null }>(
        server.services.store.db,
        sql`SELECT event, content FROM memory_versions WHERE owner_id = ${"hist-once"} AND memory_id = ${id} ORDER BY seq`,
      ).then((rows) => rows.map((r) => [r.event, r.content]));
    expect(await stored()).toEqual([
      ["created", "Owns a bike painted teal"],
      ["updated", "Owns a bike painted orange"],
      ["updated", null],
    ]);

    // A store written before: the newest version holds a copy too. The migration takes it back.
    await run(
      server.services.store.db,
      sql`UPDATE memory_versions SET content = ${"Owns a bike painted orange"} WHERE owner_id = ${"hist-once"} AND content IS NULL`,
    );
    await run(
      server.services.store.db,
      sql`DELETE FROM schema_migrations WHERE id = ${"0580_memory_versions_current_text"}`,
    );
    expect(await migrate(server.services.store, allMigrations)).toEqual(["0580_memory_versions_current_text"]);
    expect((await stored())[2]).toEqual(["updated", null]);
    expect(await history()).toEqual(said);

    // Erased by the person: no version keeps the text, the memory's or its own.
    expect((await server.call("DELETE", `/v1/memories/${id}`, { token: user }))[0]).toBeLessThan(300);
    expect(await stored()).toEqual([["deleted", ""]]);
    expect(await history()).toEqual([["deleted", "", {}]]);
  });
});

describe("import", () => {
  const { root, dataDir } = cliDataDirs("mnemo-dup-import-");
  test("an import skips exact duplicates (of stored memories and within the file) and records source import", async () => {
    const data = dataDir("d");
    const file = join(root, "m.jsonl");
    writeFileSync(
      file,
      ['{"content":"Likes jazz"}', '{"content":"likes  JAZZ"}', '{"content":"Plays chess"}'].join("\n"),
    );
    const first = await runCli(["import", file, "--user", "alice", "--json", "--data", data]);
    expect(first.exitCode).toBe(0);
    const report = JSON.parse(first.stdout);
    expect([report.inserted, report.existing, report.failed]).toEqual([2, 1, 0]);
    writeFileSync(file, ['{"content":"PLAYS CHESS "}', '{"content":"Reads poetry"}'].join("\n"));
    const second = JSON.parse((await runCli(["import", file, "--user", "alice", "--json", "--data", data])).stdout);
    expect([second.inserted, second.existing, second.failed]).toEqual([1, 1, 0]);
  });
});

describe("memories stored before the rule, and mnemo doctor", () => {
  test("keys stored as a whole SHA-256 (64 hex digits) are cut to the 32 the rule keeps now: an old memory's duplicate is still found", async () => {
    const user = "key-128";
    const first = await post(user, { content: "Keeps bees on the roof" });
    const encrypted = await post(user, { content: encryptString("a sealed note", randomBytes(32)) });
    const keys = () =>
      all<{ id: string; content_key: string }>(
        server.services.store.db,
        sql`SELECT id, content_key FROM memories WHERE owner_id = ${user} ORDER BY seq`,
      );
    const now = await keys();
    expect(now[0].content_key).toMatch(/^[0-9a-f]{32}$/);
    expect(now[1].content_key).toBe(`enc:${encrypted.body.id}`);
    // As a store written before: the whole digest.
    const whole = createHash("sha256").update("keeps bees on the roof").digest("hex");
    expect(whole.startsWith(now[0].content_key)).toBe(true);
    await run(server.services.store.db, sql`UPDATE memories SET content_key = ${whole} WHERE id = ${first.body.id}`);
    await run(
      server.services.store.db,
      sql`DELETE FROM schema_migrations WHERE id = ${"0590_memories_content_key_128"}`,
    );
    expect(await migrate(server.services.store, allMigrations)).toEqual(["0590_memories_content_key_128"]);
    expect(await keys()).toEqual(now);
    const again = await post(user, { content: "keeps BEES on the roof " });
    expect([again.status, again.body.id]).toEqual([200, first.body.id]);
    expect(await count(user)).toBe(2);
  });

  test("older rows get their key at start (their own duplicates kept, marked); doctor reports near-duplicates by id, never content", async () => {
    const dataDir = tempDir("mnemo-dup-legacy-");
    const first = await startTestServer({ dataDir });
    const ids: string[] = [];
    try {
      for (const content of [
        "Likes green tea",
        "Walks to work",
        "Speaks Dutch",
        "I like tea, and coffee.",
        "i like coffee and tea",
      ]) {
        ids.push((await first.call("POST", "/v1/memories", { token: mock("legacy"), body: { content } }))[1].id);
      }
      // As a store written before the rule: no keys, and an exact duplicate among the rows.
      await run(
        first.services.store.db,
        sql`UPDATE memories SET content_key = NULL, content = ${"likes GREEN tea "} WHERE id = ${ids[2]}`,
      );
      await run(first.services.store.db, sql`UPDATE memories SET content_key = NULL`);
    } finally {
      await first.stop();
    }
    const again = await startTestServer({ dataDir });
    try {
      const keys = await all<{ id: string; content_key: string | null }>(
        again.services.store.db,
        sql`SELECT id, content_key FROM memories WHERE owner_id = ${"legacy"} ORDER BY seq`,
      );
      expect(keys.map((k) => k.content_key === null)).toEqual([false, false, false, false, false]);
      expect(keys[2].content_key).toBe(`dup:${ids[2]}`);
      // The first of the two is the one a new write finds.
      const [status, body] = await again.call("POST", "/v1/memories", {
        token: mock("legacy"),
        body: { content: "likes green tea" },
      });
      expect([status, body.id]).toEqual([200, ids[0]]);
      const doctor = await runCli(["doctor", "--json", "--data", dataDir]);
      const check = JSON.parse(doctor.stdout).checks.find((c: any) => c.name === "memory duplicates");
      expect(check.status).toBe("warn");
      expect(check.items).toEqual([
        { ownerId: "legacy", workspaceId: null, ids: [ids[0], ids[2]] },
        { ownerId: "legacy", workspaceId: null, ids: [ids[3], ids[4]] },
      ]);
      expect(doctor.stdout).not.toContain("coffee");
    } finally {
      await again.destroy();
    }
  });
});
