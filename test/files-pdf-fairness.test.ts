import { describe, expect, test } from "bun:test";
import { loadConfig } from "../src/config";
import { openStoreFor } from "../src/db/open";
import { run, sql } from "../src/db/store";
import { createLogger } from "../src/lib/log";
import { startServer } from "../src/server";
import { databaseEnvFor } from "./helpers/database";
import { waitForText } from "./helpers/pdf";
import { startTestServer, withClient, type TestServer } from "./helpers/server";
import { createWorkspace } from "./helpers/workspaces";

/**
 * The PDF text reader takes turns between users: a backlog of one user's PDFs (each may
 * take the whole time budget) does not hold another user's file until it is all read. The
 * order is read from the reader's one log line per file it could not index (a damaged PDF
 * is read at once, so each is a turn of the queue), never from durations.
 */
const damaged = (n: number) => new TextEncoder().encode(`%PDF-1.4\nnot a PDF body ${n}\n%%EOF\n`);

async function upload(s: TestServer, ws: string, filename: string, bytes: Uint8Array, token: string) {
  const [, issued] = await s.call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
    body: { filename, contentType: "application/pdf" },
    token,
  });
  const response = await fetch(issued.url, {
    method: "PUT",
    body: bytes,
    headers: { "content-type": "application/pdf" },
  });
  if (response.status !== 201) throw new Error(`PUT: ${response.status} ${await response.text()}`);
  return issued.key as string;
}

const ownerOf = (name: string) => (name.startsWith("a") ? "alice" : name.startsWith("b") ? "bob" : "carol");
const listFiles = (s: TestServer, ws: string, token: string) => async () =>
  (await s.call("GET", `/v1/workspaces/${ws}/files?limit=100`, { token }))[1].files;

describe("the PDF text queue", () => {
  test("is round robin between owners: another user's file is read after one of a backlog's files, not after all of them", async () => {
    const first = await startTestServer();
    const dataDir = first.dataDir;
    const users = { alice: "mock-token-alice", bob: "mock-token-bob", carol: "mock-token-carol" };
    const spaces = {
      alice: await createWorkspace(first, "A", users.alice),
      bob: await createWorkspace(first, "B", users.bob),
      carol: await createWorkspace(first, "C", users.carol),
    };
    // Alice's backlog of four, then Bob's two, then Carol's one, in that order of upload.
    const plan: Array<[keyof typeof users, string]> = [
      ["alice", "a1"],
      ["alice", "a2"],
      ["alice", "a3"],
      ["alice", "a4"],
      ["bob", "b1"],
      ["bob", "b2"],
      ["carol", "c1"],
    ];
    const keys = new Map<string, string>();
    for (const [user, name] of plan)
      keys.set(await upload(first, spaces[user], `${name}.pdf`, damaged(keys.size), users[user]), name);
    await first.stop();
    // As a server that stopped leaves them: all pending, read by the next one in one pass.
    const env = { EMBEDDINGS_PROVIDER: "none", ...(await databaseEnvFor(dataDir)) };
    const config = loadConfig({ dataDir, port: 0, allowMockTokens: true, logLevel: "warn" }, env);
    const store = openStoreFor(config.storage, dataDir);
    await run(store.db, sql`UPDATE files SET text_status = 'pending', text_reason = NULL, text_claimed_until = NULL`);
    await store.close();

    const lines: string[] = [];
    const second = withClient(
      await startServer(config, { log: createLogger("warn", (line) => lines.push(line)) }),
      dataDir,
    );
    try {
      for (const [key, name] of keys) {
        const user = ownerOf(name);
        expect(await waitForText(listFiles(second, spaces[user], users[user]), key)).toMatchObject({
          status: "not_indexed",
          reason: "unreadable",
        });
      }
      const order = lines
        .filter((line) => line.includes("its text not indexed"))
        .map((line) => [...keys].find(([key]) => line.includes(key))?.[1]);
      expect(order).toEqual(["a1", "b1", "c1", "a2", "b2", "a3", "a4"]);
    } finally {
      await second.destroy();
    }
  });
});
