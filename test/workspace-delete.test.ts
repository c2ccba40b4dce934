import { afterAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { createFormationJobRepository } from "../src/formation/jobs-repository";
import { startFakeUpstream } from "./helpers/fake-upstream";
import { indexRows } from "./helpers/index-rows";
import { mock, startTestServer } from "./helpers/server";
import { apiError, createDocument, createWorkspace } from "./helpers/workspaces";

const fake = startFakeUpstream({ reply: "Noted.", memoryModel: true });
const server = await startTestServer({
  env: { LLM_GATEWAY_URL: fake.url, MNEMO_MEMORY_MODEL: "memory-model", MNEMO_EXTRACTION_RETRY_MS: "0" },
});
afterAll(async () => {
  await server.destroy();
  fake.stop();
});
const jobs = createFormationJobRepository();

/** Runs the extraction worker until none of the user's jobs is pending or running. */
async function jobsSettled(user: string) {
  await server.services.capture.idle();
  for (;;) {
    await server.services.capture.runDue();
    const list = await jobs.listByOwner(server.services.store.db, user);
    if (list.every((j) => j.status === "done" || j.status === "failed")) return list;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * A workspace holding one of everything, each carrying `word` (a word no other fixture
 * uses): a document, a note, a chat thread with a message, a text file, a memory, and a
 * captured conversation (a thread of its own and its extraction job).
 */
async function fill(user: string, name: string, word: string) {
  const token = mock(user);
  const ws = await createWorkspace(server, name, token);
  const doc = await createDocument(
    server,
    ws,
    { title: `Doc ${word}`, indexable_blocks: [{ id: `blk-${word}`, content: `the ${word} report` }] },
    token,
  );
  const [, note] = await server.call("POST", `/v1/workspaces/${ws}/notes`, {
    token,
    body: { documentPayload: { title: word }, blocksPayload: [] },
  });
  const [, thread] = await server.call("POST", `/v1/workspaces/${ws}/chats`, {
    token,
    body: { title: `Chat ${word}` },
  });
  const [, message] = await server.call("POST", `/v1/workspaces/${ws}/chats/${thread.id}/messages`, {
    token,
    body: { role: "user", content: `about ${word}` },
  });
  const [, issued] = await server.call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
    token,
    body: { filename: `${word}.txt`, contentType: "text/plain" },
  });
  const put = await fetch(issued.url, {
    method: "PUT",
    body: `the ${word} file`,
    headers: { "content-type": "text/plain" },
  });
  expect(put.status).toBe(201);
  const [, memory] = await server.call("POST", "/v1/memories", {
    token,
    body: { content: `I keep ${word} here`, workspaceId: ws },
  });
  await new OpenAI({
    apiKey: token,
    baseURL: `${server.url}/v1`,
    maxRetries: 0,
    defaultHeaders: { "X-Svc-Remember": "true", "X-Svc-Workspace": ws, "X-Svc-Thread": `captured-${name}` },
  }).chat.completions.create({ model: "m", messages: [{ role: "user", content: `captured ${word}` }] });
  await jobsSettled(user);
  const file = await server.services.files.get(user, ws, issued.key);
  return {
    ws,
    doc: doc.id,
    note: note.id,
    thread: thread.id,
    message: message.id,
    file: issued.key,
    blobId: file.blobId,
    memory: memory.id,
    word,
  };
}
type Filled = Awaited<ReturnType<typeof fill>>;

/** What of `f` is reachable through the API and the index, for its owner. */
async function reachable(user: string, f: Filled) {
  const token = mock(user);
  await server.services.indexer.drain();
  const status = async (path: string) => (await server.call("GET", path, { token }))[0];
  const [, memories] = await server.call("GET", "/v1/memories", { token });
  const [, found] = await server.call("POST", "/v1/memories/search", { token, body: { query: f.word } });
  const [, query] = await server.call("POST", "/v1/documents/query", {
    token,
    body: { query: f.word, signals: ["text"], include: { memories: true, files: true } },
  });
  const rows = (await indexRows(server.dataDir)).filter((r) => r.owner_id === user);
  const ids = new Set([`blk-${f.word}`, f.message, f.file, f.memory, f.doc]);
  return {
    workspace: await status(`/v1/workspaces/${f.ws}`),
    document: await status(`/v1/workspaces/${f.ws}/documents/${f.doc}`),
    note: await status(`/v1/workspaces/${f.ws}/notes/${f.note}`),
    messages: await status(`/v1/workspaces/${f.ws}/chats/${f.thread}/messages`),
    download: (
      await fetch(`${server.url}/v1/workspaces/${f.ws}/files/${f.file}`, {
        headers: { authorization: `Bearer ${token}` },
      })
    ).status,
    blob: await server.services.blobs.exists(f.blobId),
    memory: (memories.data as any[]).some((m) => m.id === f.memory),
    memorySearch: JSON.stringify(found).includes(f.word),
    documentsQuery: JSON.stringify(query.items ?? []).includes(f.word),
    indexRows: rows.filter((r) => ids.has(r.item_id) || r.item_id.includes(f.word)).length > 0,
    jobs: (await jobs.listByOwner(server.services.store.db, user)).filter(
      (j) => j.threadWorkspaceId === f.ws || j.workspaceId === f.ws,
    ).length,
    history: (await server.call("GET", `/v1/memories/${f.memory}/history`, { token }))[0],
  };
}
const present = {
  workspace: 200,
  document: 200,
  note: 200,
  messages: 200,
  download: 200,
  blob: true,
  memory: true,
  memorySearch: true,
  documentsQuery: true,
  indexRows: true,
  jobs: 1,
  history: 200,
};
const gone = {
  workspace: 404,
  document: 404,
  note: 404,
  messages: 404,
  download: 404,
  blob: false,
  memory: false,
  memorySearch: false,
  documentsQuery: false,
  indexRows: false,
  jobs: 0,
  history: 404,
};

describe("DELETE /v1/workspaces/:id", () => {
  test("removes the workspace and all it holds; the owner's other workspace and another user's are untouched", async () => {
    const finance = await fill("del-a", "Finance", "quokka");
    const other = await fill("del-a", "Other", "wombat");
    const bobs = await fill("del-b", "Finance", "numbat");
    expect(await reachable("del-a", finance)).toEqual(present);

    expect(await server.call("GET", `/v1/workspaces/${finance.ws}/contents`, { token: mock("del-a") })).toEqual([
      200,
      { workspaceId: finance.ws, documents: 2, threads: 2, messages: 3, files: 1, memories: 2, jobs: 1 },
    ]);
    expect(await server.call("DELETE", `/v1/workspaces/${finance.ws}`, { token: mock("del-a") })).toEqual([
      200,
      {
        id: finance.ws,
        deleted: true,
        removed: { documents: 2, threads: 2, messages: 3, files: 1, memories: 2, jobs: 1 },
      },
    ]);

    expect(await reachable("del-a", finance)).toEqual(gone);
    expect(await reachable("del-a", other)).toEqual(present);
    expect(await reachable("del-b", bobs)).toEqual(present);
    const [, list] = await server.call("GET", "/v1/workspaces", { token: mock("del-a") });
    expect(list.map((w: { id: string }) => w.id)).toEqual([other.ws]);
    expect(await server.call("DELETE", `/v1/workspaces/${finance.ws}`, { token: mock("del-a") })).toEqual([
      404,
      apiError("not_found", `workspace '${finance.ws}' not found`),
    ]);
  });

  test("another user's workspace is a 404 that changes nothing", async () => {
    const ws = await createWorkspace(server, "Mine", mock("iso-a"));
    const missing = [404, apiError("not_found", `workspace '${ws}' not found`)];
    expect({
      delete: await server.call("DELETE", `/v1/workspaces/${ws}`, { token: mock("iso-b") }),
      rename: await server.call("PATCH", `/v1/workspaces/${ws}`, { token: mock("iso-b"), body: { name: "Theirs" } }),
      contents: await server.call("GET", `/v1/workspaces/${ws}/contents`, { token: mock("iso-b") }),
    }).toEqual({ delete: missing, rename: missing, contents: missing } as any);
    expect((await server.call("GET", `/v1/workspaces/${ws}`, { token: mock("iso-a") }))[1].workspace.name).toBe("Mine");
  });
});

describe("PATCH /v1/workspaces/:id", () => {
  test("renames; a blank or missing name is a 400 naming the field", async () => {
    const ws = await createWorkspace(server, "Old", mock("ren-a"));
    const [status, body] = await server.call("PATCH", `/v1/workspaces/${ws}`, {
      token: mock("ren-a"),
      body: { name: "New" },
    });
    expect({ status, body }).toEqual({
      status: 200,
      body: { workspace: { id: ws, name: "New", createdAt: expect.any(String), updatedAt: expect.any(String) } },
    });
    expect((await server.call("GET", `/v1/workspaces/${ws}`, { token: mock("ren-a") }))[1].workspace.name).toBe("New");
    const blank = await server.call("PATCH", `/v1/workspaces/${ws}`, { token: mock("ren-a"), body: { name: "  " } });
    const missing = await server.call("PATCH", `/v1/workspaces/${ws}`, { token: mock("ren-a"), body: {} });
    expect([blank[0], blank[1].error.message, missing[0], missing[1].error.message.includes("name")]).toEqual([
      400,
      "name: must not be blank",
      400,
      true,
    ]);
  });
});
