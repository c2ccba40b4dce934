import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { killSpawnedServers, spawnServer } from "./helpers/cli";
import { duplicates, indexRows } from "./helpers/index-rows";
import { tempDir } from "./helpers/server";

afterEach(killSpawnedServers);

const headers = { authorization: "Bearer mock-token-p", "content-type": "application/json" };
const create = (url: string, content: string) =>
  fetch(`${url}/v1/memories`, { method: "POST", headers, body: JSON.stringify({ content }) });
const search = (url: string, query: string) =>
  fetch(`${url}/v1/memories/search`, { method: "POST", headers, body: JSON.stringify({ query, limit: 100 }) }).then(
    (r) => r.json() as Promise<any>,
  );

describe("durability", () => {
  test("memories survive a clean restart", async () => {
    const dir = tempDir("mnemo-persist-");
    const first = await spawnServer(["--data", dir, "--allow-mock-tokens"]);
    const created = (await (await create(first.url, "persistent walrus fact")).json()) as { id: string };
    first.proc.kill("SIGTERM");
    expect(await first.proc.exited).toBe(0);

    const second = await spawnServer(["--data", dir, "--allow-mock-tokens"]);
    const got = await fetch(`${second.url}/v1/memories/${created.id}`, { headers });
    expect([got.status, await got.json()]).toEqual([200, created]);
    expect((await search(second.url, "walrus")).results.map((r: { id: string }) => r.id)).toEqual([created.id]);
    second.proc.kill("SIGTERM");
    await second.proc.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  test("after SIGKILL every acknowledged write is kept and the index catches up from the outbox", async () => {
    const dir = tempDir("mnemo-crash-");
    const first = await spawnServer(["--data", dir, "--allow-mock-tokens"]);
    const writes = await Promise.all(Array.from({ length: 40 }, (_, i) => create(first.url, `crash safe otter ${i}`)));
    expect(writes.every((r) => r.status === 201)).toBe(true);
    first.proc.kill("SIGKILL");
    await first.proc.exited;

    const second = await spawnServer(["--data", dir, "--allow-mock-tokens"]);
    const list = await fetch(`${second.url}/v1/memories?limit=1000`, { headers }).then((r) => r.json() as Promise<any>);
    expect(list.data).toHaveLength(40);
    const found = await search(second.url, "otter");
    expect(found.results).toHaveLength(40);
    // Replayed batches replace rather than append: no memory is listed twice...
    expect(new Set(found.results.map((r: { id: string }) => r.id)).size).toBe(40);
    second.proc.kill("SIGTERM");
    await second.proc.exited;
    // ...and the index itself holds each exactly once (ranking alone would hide duplicates).
    const rows = (await indexRows(dir)).filter((r) => r.owner_id === "p");
    expect(duplicates(rows)).toEqual([]);
    expect(rows).toHaveLength(40);
    rmSync(dir, { recursive: true, force: true });
  });

  test("a deleted search index is rebuilt from SQLite on the next start", async () => {
    const dir = tempDir("mnemo-heal-");
    const first = await spawnServer(["--data", dir, "--allow-mock-tokens"]);
    for (const content of ["heron by the lake", "heron in the reeds"]) await create(first.url, content);
    first.proc.kill("SIGTERM");
    await first.proc.exited;
    rmSync(join(dir, "index"), { recursive: true, force: true });

    const second = await spawnServer(["--data", dir, "--allow-mock-tokens"]);
    const found = await search(second.url, "heron");
    expect(found.results.map((r: { content: string }) => r.content).sort()).toEqual([
      "heron by the lake",
      "heron in the reeds",
    ]);
    second.proc.kill("SIGTERM");
    await second.proc.exited;
    rmSync(dir, { recursive: true, force: true });
  });
});
