import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger } from "../src/lib/log";
import { runCli } from "./helpers/cli";
import { databaseEnvFor } from "./helpers/database";
import { mock, startTestServer, type TestServer } from "./helpers/server";
import { createDocument, createWorkspace } from "./helpers/workspaces";

/**
 * Read-your-writes by construction: a search includes every write acknowledged before it
 * began, whatever the index lag, and ranks the same data the same way whatever the
 * index's physical state (pending, indexed, compacted, beside busy users).
 */
const servers: TestServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.destroy();
});
async function server(env: Record<string, string> = {}): Promise<TestServer> {
  const started = await startTestServer({ env });
  servers.push(started);
  return started;
}

type Hit = { id: string; content: string; score: number };
async function search(s: TestServer, user: string, query: string, limit = 10): Promise<Hit[]> {
  const [status, body] = await s.call("POST", "/v1/memories/search", { token: mock(user), body: { query, limit } });
  expect(status).toBe(200);
  return body.results.map((r: Hit) => ({ id: r.id, content: r.content, score: r.score }));
}

describe("with no index writer at all (MNEMO_INDEX_WRITER=never)", () => {
  test("remember then recall finds it, at once and for the owner only; a delete is gone", async () => {
    const s = await server({ MNEMO_INDEX_WRITER: "never" });
    const [, created] = await s.call("POST", "/v1/memories", { body: { content: "my sister is allergic to peanuts" } });
    expect((await search(s, "alice", "peanuts")).map((h) => h.id)).toEqual([created.id]);
    expect(await search(s, "mallory", "peanuts")).toEqual([]);
    await s.call("DELETE", `/v1/memories/${created.id}`);
    expect(await search(s, "alice", "peanuts")).toEqual([]);
    // Nothing was ever indexed: every answer came from the store of record.
    expect((await s.services.indexer.stats()).pendingText).toBeGreaterThan(0);
  });

  test("documents query and context build include the pending blocks (an edit by its new words), and another user sees none of them", async () => {
    const s = await server({ MNEMO_INDEX_WRITER: "never" });
    const ws = await createWorkspace(s, "Owls");
    const doc = await createDocument(s, ws, {
      title: "Birds",
      indexable_blocks: [
        { id: "b1", content: "Barn owls hunt at night." },
        { id: "b2", content: "Swifts sleep on the wing." },
      ],
    });
    const [, query] = await s.call("POST", "/v1/documents/query", { body: { query: "owls", workspace_id: ws } });
    expect(JSON.stringify(query)).toContain("Barn owls hunt at night.");
    const [edited] = await s.call("PATCH", `/v1/documents/${doc.id}`, {
      body: { workspace_id: ws, indexable_blocks: [{ id: "b2", content: "Swifts sleep on the wing." }] },
    });
    expect(edited).toBe(200);
    expect(
      JSON.stringify((await s.call("POST", "/v1/documents/query", { body: { query: "owls", workspace_id: ws } }))[1]),
    ).not.toContain("Barn owls");
    expect(
      JSON.stringify((await s.call("POST", "/v1/documents/query", { body: { query: "swifts", workspace_id: ws } }))[1]),
    ).toContain("Swifts sleep");
    await s.call("PATCH", `/v1/documents/${doc.id}`, {
      body: { workspace_id: ws, indexable_blocks: [{ id: "b1", content: "Barn owls hunt at night." }] },
    });
    const [, context] = await s.call("POST", "/v1/context/build", {
      body: { query: "owls", workspace_id: ws, include: { notes: true } },
    });
    expect(JSON.stringify(context)).toContain("Barn owls hunt at night.");
    const [, other] = await s.call("POST", "/v1/documents/query", { token: mock("mallory"), body: { query: "owls" } });
    expect(JSON.stringify(other)).not.toContain("Barn owls");
  });
});

/** Sixty memories with overlapping words (a fixed pseudo-random draw), so that scores spread and ties happen. */
const WORDS = [
  "garden",
  "tomato",
  "river",
  "boat",
  "winter",
  "coat",
  "violin",
  "lesson",
  "bakery",
  "bread",
  "sister",
  "wedding",
  "gardening",
  "boats",
  "lessons",
];
let seed = 7;
const next = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const corpus = Array.from({ length: 60 }, (_, i) => {
  const picked = Array.from({ length: 2 + Math.floor(next() * 5) }, () => WORDS[Math.floor(next() * WORDS.length)]);
  return `${i % 4 === 0 ? "note:" : "I said"} ${picked.join(i % 2 ? " and the " : " ")}${i % 9 === 0 ? "" : ` (${i})`}`;
});
const QUERIES = [
  "garden tomato",
  "river boat winter",
  "violin lesson",
  "bread",
  "sister wedding coat",
  "gardens",
  "the boats on the river",
  // No memory holds its word: the word vectors' nearest items rank (indexed or pending alike).
  "vegetables",
];

async function rankings(s: TestServer, user: string): Promise<Record<string, Array<[string, number]>>> {
  const out: Record<string, Array<[string, number]>> = {};
  for (const query of QUERIES) out[query] = (await search(s, user, query, 8)).map((h) => [h.content, h.score]);
  return out;
}

async function write(s: TestServer, user: string, contents: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const content of contents) {
    const [status, body] = await s.call("POST", "/v1/memories", { token: mock(user), body: { content } });
    expect(status).toBe(201);
    ids.push(body.id);
  }
  return ids;
}

describe("the pending items a search keeps between searches", () => {
  test("a change or delete after a search already read the item is seen by the next search", async () => {
    const s = await server({ MNEMO_INDEX_WRITER: "never" });
    const [, created] = await s.call("POST", "/v1/memories", {
      body: { content: "the alpine cabin has a wood stove" },
    });
    expect((await search(s, "alice", "alpine stove")).map((h) => h.id)).toEqual([created.id]);
    const [patched] = await s.call("PATCH", `/v1/memories/${created.id}`, {
      body: { content: "the dentist appointment moved to friday" },
    });
    expect(patched).toBe(200);
    expect(await search(s, "alice", "alpine stove")).toEqual([]);
    expect((await search(s, "alice", "dentist appointment")).map((h) => h.id)).toEqual([created.id]);
    await s.call("DELETE", `/v1/memories/${created.id}`);
    expect(await search(s, "alice", "dentist appointment")).toEqual([]);
  });

  test("an indexed memory changed since is filtered by its current metadata, not the index's row", async () => {
    const s = await server();
    const [, created] = await s.call("POST", "/v1/memories", {
      body: { content: "renew the boat licence in spring", metadata: { tag: "chores" } },
    });
    await s.services.indexer.drain();
    // No writer from here: the change stays pending, the index keeps the old metadata.
    await s.services.indexer.stop();
    await s.call("PATCH", `/v1/memories/${created.id}`, { body: { metadata: { tag: "boats" } } });
    const filtered = async (tag: string) => {
      const [status, body] = await s.call("POST", "/v1/memories/search", {
        body: { query: "boat licence", filters: { metadata: { tag } } },
      });
      expect(status).toBe(200);
      return body.results.map((r: Hit) => r.id);
    };
    expect(await filtered("chores")).toEqual([]);
    expect(await filtered("boats")).toEqual([created.id]);
  });

  test("an indexed memory changed and indexed again is scored by its new text: what searches keep of indexed items follows every change", async () => {
    const s = await server();
    const [, a] = await s.call("POST", "/v1/memories", { body: { content: "the apple orchard by the river" } });
    const [, b] = await s.call("POST", "/v1/memories", { body: { content: "an apple a day" } });
    await s.services.indexer.settle();
    const ranked = async () => (await search(s, "alice", "apple orchard")).map((h) => [h.id, h.score]);
    const before = await ranked();
    expect(before.map(([id]) => id)).toEqual([a.id, b.id]);
    expect(await ranked()).toEqual(before);
    await s.call("PATCH", `/v1/memories/${b.id}`, { body: { content: "apple orchard, apple orchard" } });
    await s.services.indexer.settle();
    const after = await ranked();
    expect(after.map(([id]) => id)).toEqual([b.id, a.id]);
  });

  test("memories imported by the CLI while the server runs are found by its next search", async () => {
    const s = await server({ MNEMO_INDEX_WRITER: "never" });
    expect(await search(s, "alice", "harbour lighthouse")).toEqual([]);
    const file = join(s.dataDir, "import.jsonl");
    writeFileSync(file, `${JSON.stringify({ content: "the harbour lighthouse was painted red" })}\n`);
    const run = await runCli(["import", file, "--user", "alice", "--data", s.dataDir], await databaseEnvFor(s.dataDir));
    expect(run.exitCode).toBe(0);
    expect((await search(s, "alice", "harbour lighthouse")).map((h) => h.content)).toEqual([
      "the harbour lighthouse was painted red",
    ]);
  });
});

describe("rows in LanceDB but outside its full-text index, in the process that writes it", () => {
  test("are held by the pending items instead of scanned at every search, whether a search saw them queued or not, and rank as once compacted", async () => {
    const flat: number[] = [];
    const held: number[] = [];
    const log = createLogger("debug", (line) => {
      const scanned = / DEBUG search timings .*\bpending=(\d+).*\bflat=(\d+)/.exec(line);
      if (!scanned) return;
      held.push(Number(scanned[1]));
      flat.push(Number(scanned[2]));
    });
    // No compaction until asked for: the written rows stay outside the full-text index.
    const s = await startTestServer({
      env: { MNEMO_INDEX_IDLE_OPTIMIZE_MS: "3600000", MNEMO_INDEX_MAX_FRAGMENTS: "1000" },
      log,
    });
    servers.push(s);
    const half = corpus.length / 2;
    await write(s, "ranker", corpus.slice(0, half));
    // Seen queued by a search, then written into LanceDB.
    await rankings(s, "ranker");
    await s.services.indexer.drain();
    // Queued and written between two searches: never seen queued.
    await write(s, "ranker", corpus.slice(half));
    await s.services.indexer.drain();
    flat.length = 0;
    const written = await rankings(s, "ranker");
    expect(flat.length).toBe(QUERIES.length);
    expect(flat.every((n) => n === 0)).toBe(true);
    expect(held.at(-1)).toBe(corpus.length);
    await s.services.indexer.settle();
    expect(await rankings(s, "ranker")).toEqual(written);
    expect(written["garden tomato"].length).toBeGreaterThan(3);
    expect(written.vegetables.length).toBeGreaterThan(3);
    // Compacted: they are in LanceDB's full-text index now, and no longer held.
    expect(held.at(-1)).toBe(0);

    // Held, then changed and written again between two searches: found by its new words only.
    const [, created] = await s.call("POST", "/v1/memories", {
      token: mock("ranker"),
      body: { content: "the lighthouse keeper paints the shutters" },
    });
    await s.services.indexer.drain();
    const ids = async (query: string) => (await search(s, "ranker", query)).map((h) => h.id);
    expect((await ids("lighthouse shutters"))[0]).toBe(created.id);
    await s.call("PATCH", `/v1/memories/${created.id}`, {
      token: mock("ranker"),
      body: { content: "the ferry timetable changes in october" },
    });
    await s.services.indexer.drain();
    expect(await ids("lighthouse shutters")).not.toContain(created.id);
    expect((await ids("ferry timetable"))[0]).toBe(created.id);
    await s.call("DELETE", `/v1/memories/${created.id}`, { token: mock("ranker") });
    await s.services.indexer.drain();
    expect(await ids("ferry timetable")).not.toContain(created.id);
  }, 60_000);
});

describe("rankings depend on the user's own data alone", () => {
  test("identical (contents, order, scores) pending, indexed, compacted, with no writer, and beside busy users; after deletes too", async () => {
    const quiet = await server();
    const ids = await write(quiet, "ranker", corpus);
    const rightAfter = await rankings(quiet, "ranker");
    await quiet.services.indexer.drain();
    const indexed = await rankings(quiet, "ranker");
    await quiet.services.indexer.settle();
    const compacted = await rankings(quiet, "ranker");

    const never = await server({ MNEMO_INDEX_WRITER: "never" });
    await write(never, "ranker", corpus);
    const pendingOnly = await rankings(never, "ranker");

    // Beside five users writing at the same time, read right after the last write.
    const busy = await server();
    const others = Promise.all(
      Array.from({ length: 5 }, (_, u) =>
        write(
          busy,
          `busy-${u}`,
          corpus.map((c, i) => `${c} ${u} ${i % 7 === 0 ? "garden" : "river"}`),
        ),
      ),
    );
    await write(busy, "ranker", corpus);
    const besideBusy = await rankings(busy, "ranker");
    await others;

    expect(rightAfter["garden tomato"].length).toBeGreaterThan(3);
    expect({ indexed, compacted, pendingOnly, besideBusy }).toEqual({
      indexed: rightAfter,
      compacted: rightAfter,
      pendingOnly: rightAfter,
      besideBusy: rightAfter,
    });

    // Deletes: the same memories gone everywhere, the rest ranked alike, indexed or not.
    const doomed = ids.filter((_, i) => i % 5 === 0);
    for (const id of doomed)
      expect((await quiet.call("DELETE", `/v1/memories/${id}`, { token: mock("ranker") }))[0]).toBe(200);
    const neverIds = (await never.call("GET", "/v1/memories?limit=100", { token: mock("ranker") }))[1].data as Array<{
      id: string;
      content: string;
    }>;
    const doomedContents = new Set(doomed.map((id) => corpus[ids.indexOf(id)]));
    const neverDoomed = neverIds.filter((m) => doomedContents.has(m.content));
    expect(neverDoomed).toHaveLength(doomed.length);
    for (const memory of neverDoomed)
      await never.call("DELETE", `/v1/memories/${memory.id}`, { token: mock("ranker") });
    const afterDeletes = await rankings(quiet, "ranker");
    await quiet.services.indexer.drain();
    expect(await rankings(quiet, "ranker")).toEqual(afterDeletes);
    expect(await rankings(never, "ranker")).toEqual(afterDeletes);
    expect(JSON.stringify(afterDeletes)).not.toContain(JSON.stringify(corpus[0]));
    expect(Object.values(afterDeletes).every((hits) => hits.length > 0)).toBe(true);
  }, 120_000);
});
