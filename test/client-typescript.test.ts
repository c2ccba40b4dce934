import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Mnemo, MnemoError } from "../clients/typescript/src/index";
import { startFakeUpstream, type FakeUpstream } from "./helpers/fake-upstream";
import { mock, startTestServer, type TestServer } from "./helpers/server";

let server: TestServer;
let fake: FakeUpstream;
let mnemo: Mnemo;

beforeAll(async () => {
  fake = startFakeUpstream();
  server = await startTestServer({ env: { LLM_GATEWAY_URL: fake.url, MNEMO_MEMORY_MODEL: "memory-model" } });
  // The client authenticates as real callers do: with an API key.
  const [status, key] = await server.call("POST", "/v1/keys", { body: { name: "typescript client test" } });
  expect(status).toBe(201);
  mnemo = new Mnemo({ baseUrl: server.url, apiKey: key.key });
});
afterAll(async () => {
  await server.destroy();
  fake.stop();
});

/** The error a call throws (fails the test when it does not throw). */
async function thrown(call: Promise<unknown>): Promise<MnemoError> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MnemoError);
  return error as MnemoError;
}

// Whether the generated files match the OpenAPI document is checked in a process of its own by
// test/web-types.test.ts (`generate-clients --check`): a server of this process that has
// answered lists its response schemas differently.

describe("TypeScript client against a real server", () => {
  test("memories: add with a timestamp, list page by page, get, update, history, search, context, delete", async () => {
    const first = await mnemo.memories.add("Ana prefers window seats on trains", {
      timestamp: "2023-05-07",
      metadata: { topic: "travel" },
    });
    expect(first.createdAt.startsWith("2023-05-07")).toBe(true);
    await mnemo.memories.add("Ana's sister lives in Porto");
    await mnemo.memories.add("Ana plays the cello on Sundays");
    const listed: string[] = [];
    for await (const memory of mnemo.memories.list({ pageSize: 2 })) listed.push(memory.content);
    expect(listed.sort()).toEqual([
      "Ana plays the cello on Sundays",
      "Ana prefers window seats on trains",
      "Ana's sister lives in Porto",
    ]);

    expect((await mnemo.memories.get(first.id)).content).toBe("Ana prefers window seats on trains");
    const updated = await mnemo.memories.update(first.id, { content: "Ana prefers aisle seats on trains" });
    expect(updated.content).toBe("Ana prefers aisle seats on trains");
    expect((await mnemo.memories.history(first.id)).map((v) => [v.event, v.source, v.content])).toEqual([
      ["created", "api", "Ana prefers window seats on trains"],
      ["updated", "api", "Ana prefers aisle seats on trains"],
    ]);

    const { results } = await mnemo.memories.search("cello", { limit: 5 });
    expect(results.map((r) => r.content)).toEqual(["Ana plays the cello on Sundays"]);
    const context = await mnemo.context.build("aisle seats");
    expect(context.contextText).toContain("Ana prefers aisle seats on trains");

    expect(await mnemo.memories.delete(first.id)).toMatchObject({ id: first.id });
    const missing = await thrown(mnemo.memories.get(first.id));
    expect([missing.status, missing.code]).toEqual([404, "not_found"]);
  });

  test("errors carry the contract's code: a refused body, a bad key", async () => {
    const invalid = await thrown(mnemo.memories.add(""));
    expect([invalid.status, invalid.code]).toEqual([400, "invalid_request"]);
    expect(invalid.message).toContain("content");
    const stranger = new Mnemo({ baseUrl: server.url, apiKey: "mnemo_not_a_key" });
    const refused = await thrown(stranger.memories.get("mem_x"));
    expect([refused.status, refused.code]).toEqual([401, "unauthorized"]);
  });

  test("extraction (a dry run through the model) and its jobs", async () => {
    fake.script.push(
      { facts: ["Ana keeps bees"] },
      { decisions: [{ fact: 0, action: "add", content: "Ana keeps bees" }] },
    );
    const dry = await mnemo.memories.extract(
      { messages: [{ role: "user", content: "I keep bees now." }] },
      { dryRun: true },
    );
    expect([dry.applied, dry.facts]).toEqual([false, ["Ana keeps bees"]]);
    expect(await mnemo.memories.extractionJobs()).toEqual([]);
    const noJob = await thrown(mnemo.memories.retryExtractionJob("job_unknown"));
    expect([noJob.status, noJob.code]).toEqual([404, "not_found"]);
    const proposals: unknown[] = [];
    for await (const p of mnemo.memories.proposals()) proposals.push(p);
    expect(proposals).toEqual([]);
    const noProposal = await thrown(mnemo.memories.acceptProposal("prop_unknown"));
    expect([noProposal.status, noProposal.code]).toEqual([404, "not_found"]);
  });

  test("a workspace renamed, then deleted with all it holds", async () => {
    const workspace = await mnemo.workspaces.create("Attic");
    expect((await mnemo.workspaces.rename(workspace.id, "Loft")).name).toBe("Loft");
    const thread = await mnemo.workspace(workspace.id).chats.create({ title: "Boxes" });
    expect(await mnemo.workspace(workspace.id).chats.delete(thread.id)).toMatchObject({ id: thread.id, deleted: true });
    expect(await mnemo.workspaces.delete(workspace.id)).toMatchObject({ id: workspace.id, deleted: true });
    const gone = await thrown(mnemo.workspaces.get(workspace.id));
    expect([gone.status, gone.code]).toEqual([404, "not_found"]);
  });

  test("workspaces with documents, notes and chats; lists as iterators", async () => {
    const workspace = await mnemo.workspaces.create("Garden");
    await mnemo.workspaces.create("Kitchen");
    const names: string[] = [];
    for await (const w of mnemo.workspaces.list({ pageSize: 1 })) names.push(w.name);
    expect(names.sort()).toEqual(["Garden", "Kitchen"]);
    expect((await mnemo.workspaces.get(workspace.id)).name).toBe("Garden");

    const space = mnemo.workspace(workspace.id);
    const { document } = await space.documents.create({
      title: "Planting",
      markdown: "# Planting\n\nTomatoes in May.",
    });
    expect((await space.documents.get(document.id)).markdown).toContain("Tomatoes in May.");
    const titles: string[] = [];
    for await (const d of space.documents.list()) titles.push(d.title);
    expect(titles).toEqual(["Planting"]);

    const note = await space.notes.create({ documentPayload: { title: "Seeds" }, blocksPayload: [] });
    const notes: string[] = [];
    for await (const n of space.notes.list()) notes.push(n.id);
    expect(notes).toContain(note.id);

    const thread = await space.chats.create({ title: "Pests" });
    await space.chats.addMessage(thread.id, { role: "user", content: "Aphids on the roses" });
    await space.chats.addMessage(thread.id, { role: "assistant", content: "Try soapy water" });
    const said: string[] = [];
    for await (const m of space.chats.messages(thread.id, { pageSize: 1 })) said.push(`${m.role}: ${m.content}`);
    expect(said).toEqual(["user: Aphids on the roses", "assistant: Try soapy water"]);

    const other = await thrown(mnemo.workspace("ws_missing").documents.get("doc_x"));
    expect(other.code).toBe("not_found");
  });

  test("files: upload through a presigned URL, list, download, delete", async () => {
    const workspace = await mnemo.workspaces.create("Files");
    const files = mnemo.workspace(workspace.id).files;
    const info = await files.upload("notes.md", "# Hello\n", "text/markdown");
    expect([info.name, info.type, Number(info.size)]).toEqual(["notes.md", "text/markdown", 8]);
    const listed: string[] = [];
    for await (const f of files.list()) listed.push(f.key);
    expect(listed).toEqual([info.key]);
    expect(new TextDecoder().decode(await files.download(info.key))).toBe("# Hello\n");
    expect(await files.delete(info.key)).toEqual({ deleted: true, key: info.key });
    expect((await thrown(files.download(info.key))).status).toBe(404);
  });

  test("keys (managed with a session or developer token, never an API key) and usage", async () => {
    expect((await thrown(mnemo.keys.list())).code).toBe("forbidden");
    const developer = new Mnemo({ baseUrl: server.url, apiKey: mock("alice") });
    const made = await developer.keys.create("second", ["memory:read"]);
    expect(made.key).toBeString();
    expect((await developer.keys.list()).map((k) => k.name)).toContain("second");
    await developer.keys.revoke(made.id);
    expect((await developer.keys.list()).map((k) => k.name)).not.toContain("second");
    const usage = await mnemo.usage.month();
    expect(usage.month).toMatch(/^\d{4}-\d{2}$/);
  });

  test("every operation of the document is a method of `api`", async () => {
    expect((await mnemo.api.getV1Me()).ok).toBe(true);
  });
});
