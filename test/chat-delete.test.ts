import { afterAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { rmSync } from "node:fs";
import { migrate } from "../src/db/migrate";
import { openStoreFor } from "../src/db/open";
import { all, run, sql } from "../src/db/store";
import { createFormationJobRepository } from "../src/formation/jobs-repository";
import { allMigrations } from "../src/migrations";
import { databaseUrlFor, dropDatabaseFor } from "./helpers/database";
import { startFakeUpstream } from "./helpers/fake-upstream";
import { indexRows } from "./helpers/index-rows";
import { mock, startTestServer, tempDir } from "./helpers/server";
import { apiError, createWorkspace, queryIds } from "./helpers/workspaces";

const fake = startFakeUpstream({ reply: "Noted.", memoryModel: true });
const server = await startTestServer({
  env: { LLM_GATEWAY_URL: fake.url, MNEMO_MEMORY_MODEL: "memory-model", MNEMO_EXTRACTION_RETRY_MS: "0" },
});
afterAll(async () => {
  await server.destroy();
  fake.stop();
});
const jobs = createFormationJobRepository();
const base = (ws: string) => `/v1/workspaces/${ws}/chats`;

/** A completion asked to remember, in thread `threadId` of `ws`; resolves once it is captured. */
async function capture(user: string, ws: string, threadId: string, content: string) {
  await new OpenAI({
    apiKey: mock(user),
    baseURL: `${server.url}/v1`,
    maxRetries: 0,
    defaultHeaders: { "X-Svc-Remember": "true", "X-Svc-Workspace": ws, "X-Svc-Thread": threadId },
  }).chat.completions.create({ model: "m", messages: [{ role: "user", content }] });
  await server.services.capture.idle();
}
const messages = async (user: string, ws: string, thread: string) => {
  const [status, body] = await server.call("GET", `${base(ws)}/${thread}/messages`, { token: mock(user) });
  return status === 200 ? (body as Array<{ content: string }>).map((m) => m.content) : status;
};

describe("DELETE /v1/workspaces/:workspaceId/chats/:threadId", () => {
  test("removes the thread, its messages, their index rows and its jobs; the other thread stays", async () => {
    const token = mock("thr-a");
    const ws = await createWorkspace(server, "Chats", token);
    await capture("thr-a", ws, "gone-thread", "the heron nests");
    await capture("thr-a", ws, "kept-thread", "the egret nests");
    const ids = async (thread: string) =>
      ((await server.call("GET", `${base(ws)}/${thread}/messages`, { token }))[1] as Array<{ id: string }>).map(
        (m) => m.id,
      );
    const [goneIds, keptIds] = [await ids("gone-thread"), await ids("kept-thread")];
    await server.services.indexer.drain();
    const indexed = async () =>
      new Set((await indexRows(server.dataDir)).filter((r) => r.owner_id === "thr-a").map((r) => r.item_id));
    const found = async () => new Set(await queryIds(server, { workspace_id: ws, query: "nests" }, token));
    const holds = (set: Set<string>) => ({
      gone: goneIds.filter((id) => set.has(id)).length,
      kept: keptIds.filter((id) => set.has(id)).length,
    });
    expect({ indexed: holds(await indexed()), found: holds(await found()) }).toEqual({
      indexed: { gone: 2, kept: 2 },
      found: { gone: 2, kept: 2 },
    });

    expect(await server.call("DELETE", `${base(ws)}/gone-thread`, { token })).toEqual([
      200,
      { id: "gone-thread", deleted: true, removed: { messages: 2, jobs: 1 } },
    ]);
    expect(await messages("thr-a", ws, "gone-thread")).toBe(404);
    expect(await messages("thr-a", ws, "kept-thread")).toEqual(["the egret nests", "Noted."]);
    const [, threads] = await server.call("GET", base(ws), { token });
    expect(threads.map((t: { id: string }) => t.id)).toEqual(["kept-thread"]);
    // Gone from searches at once, however far the index writer got, and from the index once it ran.
    expect(holds(await found())).toEqual({ gone: 0, kept: 2 });
    await server.services.indexer.drain();
    expect(holds(await indexed())).toEqual({ gone: 0, kept: 2 });
    expect((await jobs.listByOwner(server.services.store.db, "thr-a")).map((j) => j.threadId)).toEqual(["kept-thread"]);
    expect(await server.call("DELETE", `${base(ws)}/gone-thread`, { token })).toEqual([
      404,
      apiError("not_found", "thread 'gone-thread' not found"),
    ]);
  });

  test("another user's thread or workspace is a 404 that changes nothing", async () => {
    const ws = await createWorkspace(server, "Private", mock("thr-own"));
    const [, thread] = await server.call("POST", base(ws), { token: mock("thr-own"), body: { title: "Mine" } });
    const theirs = await createWorkspace(server, "Theirs", mock("thr-other"));
    expect({
      inMine: await server.call("DELETE", `${base(ws)}/${thread.id}`, { token: mock("thr-other") }),
      inTheirs: await server.call("DELETE", `${base(theirs)}/${thread.id}`, { token: mock("thr-other") }),
      rename: await server.call("PATCH", `${base(ws)}/${thread.id}`, {
        token: mock("thr-other"),
        body: { title: "Theirs" },
      }),
    }).toEqual({
      inMine: [404, apiError("not_found", `workspace '${ws}' not found`)],
      inTheirs: [404, apiError("not_found", `thread '${thread.id}' not found`)],
      rename: [404, apiError("not_found", `workspace '${ws}' not found`)],
    } as any);
    const [, threads] = await server.call("GET", base(ws), { token: mock("thr-own") });
    expect(threads.map((t: { title: string }) => t.title)).toEqual(["Mine"]);
  });

  test("PATCH renames a thread", async () => {
    const token = mock("thr-ren");
    const ws = await createWorkspace(server, "Rename", token);
    const [, thread] = await server.call("POST", base(ws), { token, body: { title: "Old" } });
    expect(await server.call("PATCH", `${base(ws)}/${thread.id}`, { token, body: { title: "New" } })).toEqual([
      200,
      { success: true },
    ]);
    const [, threads] = await server.call("GET", base(ws), { token });
    expect(threads.map((t: { title: string }) => t.title)).toEqual(["New"]);
  });
});

describe("thread ids are per user", () => {
  test("two users capturing into the same client-chosen thread id each get their own thread", async () => {
    const wsA = await createWorkspace(server, "A", mock("same-a"));
    const wsB = await createWorkspace(server, "B", mock("same-b"));
    await capture("same-a", wsA, "victim-chat-1", "alice's words");
    await capture("same-b", wsB, "victim-chat-1", "bob's words");
    expect({
      alice: await messages("same-a", wsA, "victim-chat-1"),
      bob: await messages("same-b", wsB, "victim-chat-1"),
      aliceInBobs: await messages("same-a", wsB, "victim-chat-1"),
      bobInAlices: await messages("same-b", wsA, "victim-chat-1"),
    }).toEqual({
      alice: ["alice's words", "Noted."],
      bob: ["bob's words", "Noted."],
      aliceInBobs: 404,
      bobInAlices: 404,
    });
    // Deleting one user's thread leaves the other's.
    expect((await server.call("DELETE", `${base(wsA)}/victim-chat-1`, { token: mock("same-a") }))[0]).toBe(200);
    expect(await messages("same-b", wsB, "victim-chat-1")).toEqual(["bob's words", "Noted."]);
  });

  test("the migration keeps every thread and message, in order, and lets a second user take an id", async () => {
    const dataDir = tempDir();
    const store = openStoreFor({ databaseUrl: await databaseUrlFor(dataDir, { migrated: false }) }, dataDir);
    try {
      await migrate(
        store,
        allMigrations.filter((m) => m.id < "0550_chat_ids_per_owner"),
      );
      for (const [seq, id] of [
        [1, "t1"],
        [2, "t2"],
      ] as const) {
        await run(
          store.db,
          sql`INSERT INTO chat_threads (owner_id, workspace_id, id, title, created_at, updated_at) VALUES ('alice', 'ws', ${id}, ${id}, 't', 't')`,
        );
        for (const m of [1, 2]) {
          await run(
            store.db,
            sql`INSERT INTO chat_messages (owner_id, thread_id, id, role, content, encrypted_content, created_at)
                                  VALUES ('alice', ${id}, ${`m${seq}${m}`}, 'user', ${`text ${seq}.${m}`}, ${m === 2 ? "iv:tag:ct" : null}, 't')`,
          );
        }
      }
      await migrate(store, allMigrations);
      await run(
        store.db,
        sql`INSERT INTO chat_threads (owner_id, workspace_id, id, title, created_at, updated_at) VALUES ('bob', 'ws', 't1', 'bob', 't', 't')`,
      );
      await run(
        store.db,
        sql`INSERT INTO chat_messages (owner_id, thread_id, id, role, content, created_at) VALUES ('bob', 't1', 'm11', 'user', 'bob', 't')`,
      );
      const duplicate = await run(
        store.db,
        sql`INSERT INTO chat_threads (owner_id, workspace_id, id, title, created_at, updated_at) VALUES ('bob', 'ws2', 't1', 'x', 't', 't')`,
      ).catch(() => "refused");
      expect({
        threads: await all(store.db, sql`SELECT owner_id, id FROM chat_threads ORDER BY seq`),
        messages: await all(
          store.db,
          sql`SELECT owner_id, thread_id, id, content, encrypted_content FROM chat_messages ORDER BY seq`,
        ),
        duplicate,
      }).toEqual({
        threads: [
          { owner_id: "alice", id: "t1" },
          { owner_id: "alice", id: "t2" },
          { owner_id: "bob", id: "t1" },
        ],
        messages: [
          { owner_id: "alice", thread_id: "t1", id: "m11", content: "text 1.1", encrypted_content: null },
          { owner_id: "alice", thread_id: "t1", id: "m12", content: "text 1.2", encrypted_content: "iv:tag:ct" },
          { owner_id: "alice", thread_id: "t2", id: "m21", content: "text 2.1", encrypted_content: null },
          { owner_id: "alice", thread_id: "t2", id: "m22", content: "text 2.2", encrypted_content: "iv:tag:ct" },
          { owner_id: "bob", thread_id: "t1", id: "m11", content: "bob", encrypted_content: null },
        ],
        duplicate: "refused",
      });
    } finally {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
      await dropDatabaseFor(dataDir);
    }
  });
});
