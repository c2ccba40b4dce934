import { afterEach, describe, expect, test } from "bun:test";
import { killSpawnedServers, spawnServer } from "./helpers/cli";
import { rmSync } from "node:fs";
import { dropDatabaseFor, TEST_DATABASE_URL } from "./helpers/database";
import { tempDir } from "./helpers/server";

afterEach(killSpawnedServers);

const auth = { authorization: "Bearer mock-token-rep" };
const json = (url: string, method: string, body?: unknown) =>
  fetch(url, {
    method,
    headers: { ...auth, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (r) => [r.status, await r.json()] as [number, any]);

const backend = TEST_DATABASE_URL ? "PostgreSQL" : "the embedded store";

describe(`files across two replicas on ${backend}`, () => {
  test("a URL signed by one replica is accepted by the other, once; an upload session moves between replicas", async () => {
    const dir = tempDir("mnemo-files-replicas-");
    const args = ["--data", dir, "--allow-mock-tokens"];
    const a = await spawnServer(args);
    const b = await spawnServer(args);
    const [, ws] = await json(`${a.url}/v1/workspaces`, "POST", { name: "Shared" });

    const [, issued] = await json(`${a.url}/v1/workspaces/${ws.id}/files/upload-url`, "POST", {
      filename: "r.txt",
      contentType: "text/plain",
    });
    const onB = issued.url.replace(a.url, b.url);
    const put = await fetch(onB, {
      method: "PUT",
      body: "signed on A, stored through B",
      headers: { "content-type": "text/plain" },
    });
    expect(put.status).toBe(201);
    const fromA = await fetch(`${a.url}/v1/workspaces/${ws.id}/files/${issued.key}`, { headers: auth });
    expect([fromA.status, await fromA.text()]).toEqual([200, "signed on A, stored through B"]);
    // The URL is used up for every replica, and stays so after the file is deleted.
    const used = {
      error: {
        code: "conflict",
        message:
          "signature: this upload URL was already used (a URL is good for one upload); ask files/upload-url for a new one",
      },
    };
    const replay = (url: string) =>
      fetch(url, { method: "PUT", body: "replayed", headers: { "content-type": "text/plain" } }).then(async (r) => [
        r.status,
        await r.json(),
      ]);
    expect(await replay(issued.url)).toEqual([409, used]);
    expect(
      (await fetch(`${b.url}/v1/workspaces/${ws.id}/files/${issued.key}`, { method: "DELETE", headers: auth })).status,
    ).toBe(200);
    expect(await replay(issued.url)).toEqual([409, used]);
    expect(await replay(onB)).toEqual([409, used]);
    expect((await fetch(`${a.url}/v1/workspaces/${ws.id}/files/${issued.key}`, { headers: auth })).status).toBe(404);

    const [, { uploadId }] = await json(`${a.url}/v1/uploads/start`, "POST", {
      workspaceId: ws.id,
      filename: "p.bin",
      contentType: "application/octet-stream",
    });
    expect(
      await json(`${b.url}/v1/uploads/${uploadId}/part`, "POST", {
        partNumber: 2,
        data: Buffer.from(" world").toString("base64"),
      }),
    ).toEqual([200, { uploaded: true }]);
    expect(
      await json(`${a.url}/v1/uploads/${uploadId}/part`, "POST", {
        partNumber: 1,
        data: Buffer.from("hello").toString("base64"),
      }),
    ).toEqual([200, { uploaded: true }]);
    const [status, done] = await json(`${b.url}/v1/uploads/${uploadId}/complete`, "POST");
    expect(status).toBe(200);
    const joined = await fetch(`${a.url}/v1/workspaces/${ws.id}/files/${done.key}`, { headers: auth });
    expect(await joined.text()).toBe("hello world");

    await Promise.all(
      [a, b].map((server) => {
        server.proc.kill();
        return server.proc.exited;
      }),
    );
    rmSync(dir, { recursive: true, force: true });
    await dropDatabaseFor(dir);
  });
});
