/**
 * Faults (docs/reliability.md#faults), each against a real server process: a corrupted SQLite file, a
 * missing or corrupted index directory, a read-only data dir, a full disk (a small
 * tmpfs), an unreachable database, the embeddings endpoint down, and (PostgreSQL) the
 * database connection cut under load through a local TCP proxy (the shared PostgreSQL
 * server itself is never restarted). Mount-based faults need root and are skipped
 * (saying so) without it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { databaseEnvFor, dropDatabaseFor, TEST_DATABASE_URL } from "../helpers/database";
import { startFakeUpstream, unreachableUrl } from "../helpers/fake-upstream";
import { tempDir } from "../helpers/server";
import { BACKEND, figure } from "./lib/mode";
import { childEnv, killChildren, runCli, startChild, type ChildServer } from "./lib/server-process";
import { startTcpProxy } from "./lib/tcp-proxy";
import { startFakeS3 } from "../helpers/fake-s3";

const dirs: string[] = [];
const fresh = (name: string) => {
  const dir = tempDir(`mnemo-fault-${name}-`);
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  killChildren();
  for (const dir of dirs) {
    rmSync(dir, { recursive: true, force: true });
    await dropDatabaseFor(dir);
  }
});

const headers = { authorization: "Bearer mock-token-fault", "content-type": "application/json" };
async function call(server: ChildServer, method: string, path: string, body?: unknown): Promise<[number, any]> {
  const response = await fetch(server.url + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  try {
    return [response.status, JSON.parse(text)];
  } catch {
    return [response.status, text];
  }
}

/** sha256 of every file under a dir, by relative path. */
function fingerprint(dir: string, prefix = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) Object.assign(out, fingerprint(path, `${prefix}${name}/`));
    else out[prefix + name] = createHash("sha256").update(readFileSync(path)).digest("hex");
  }
  return out;
}

/** A data dir holding `count` memories with the word `word`, server stopped cleanly. */
async function seeded(name: string, count: number, word: string, extra: Record<string, string> = {}) {
  const dataDir = fresh(name);
  const env = childEnv(dataDir, { ...(await databaseEnvFor(dataDir)), ...extra });
  const server = await startChild(dataDir, env);
  for (let i = 0; i < count; i++)
    expect((await call(server, "POST", "/v1/memories", { content: `${word} number ${i}` }))[0]).toBe(201);
  await waitForSearch(server, word, count);
  expect(await server.kill("SIGTERM")).toBe(0);
  return { dataDir, env };
}

async function waitForSearch(server: ChildServer, word: string, count: number, ms = 30_000): Promise<number> {
  const until = Date.now() + ms;
  let found = 0;
  while (Date.now() < until) {
    const [status, body] = await call(server, "POST", "/v1/memories/search", { query: word, limit: 100 });
    found = status === 200 ? body.results.length : -status;
    if (found >= count) return found;
    await Bun.sleep(200);
  }
  return found;
}

let corruptedSqliteStderr = "";
let readOnlyStderr = "";

/** The first lines of an error output that are not stack frames. */
const firstLines = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.trim() && !/^\s+at /.test(l))
    .slice(0, 2)
    .join(" | ")
    .slice(0, 240);

function mountable(): boolean {
  return process.platform === "linux" && process.getuid?.() === 0;
}

describe(`faults (${BACKEND})`, () => {
  test.skipIf(BACKEND !== "sqlite")(
    "a corrupted SQLite file: no start, nothing overwritten",
    async () => {
      const { dataDir, env } = await seeded("sqlite", 3, "sturdy");
      const file = join(dataDir, "mnemo.sqlite");
      const bytes = readFileSync(file);
      // Garbage over the header and the first pages; the rest of the file is left as it was.
      bytes.fill(0x5a, 0, Math.min(bytes.length, 8_192));
      writeFileSync(file, bytes);
      const before = fingerprint(dataDir);
      const run = await runCli(["serve", "--port", "0", "--data", dataDir, "--allow-mock-tokens"], env, 30_000);
      figure("faults", `corrupted SQLite: exit ${run.code}, "${firstLines(run.stderr)}"`);
      expect(run.code).not.toBe(0);
      expect(run.stdout).not.toContain("listening on");
      expect(run.stderr).toMatch(/database|corrupt|malformed/i);
      expect(fingerprint(dataDir)).toEqual(before);
      corruptedSqliteStderr = run.stderr;
    },
    60_000,
  );

  test.skipIf(BACKEND !== "sqlite")("a corrupted SQLite file: the error names the file, without a stack trace", () => {
    expect(corruptedSqliteStderr).toContain("mnemo.sqlite");
    expect(corruptedSqliteStderr).not.toMatch(/^\s+at /m);
  });

  test("an unreachable database: a clear error and no start", async () => {
    const dataDir = fresh("nodb");
    const url = BACKEND === "postgres" ? "postgres://postgres@127.0.0.1:1/none" : undefined;
    if (!url) return;
    const run = await runCli(
      ["serve", "--port", "0", "--data", dataDir],
      childEnv(dataDir, { MNEMO_DATABASE_URL: url }),
      60_000,
    );
    figure(
      "faults",
      `unreachable PostgreSQL at start: exit ${run.code}, "${run.stderr.trim().split("\n").pop()?.slice(0, 200)}"`,
    );
    expect(run.code).not.toBe(0);
    expect(run.stderr).not.toMatch(/^\s+at /m);
  }, 90_000);

  for (const damage of ["missing", "corrupted"] as const) {
    test(`a ${damage} index directory is rebuilt from the store of record, with a log line`, async () => {
      const { dataDir, env } = await seeded(`index-${damage}`, 5, "rebuildable");
      const index = join(dataDir, "index");
      if (damage === "missing") rmSync(index, { recursive: true, force: true });
      else {
        // Every file of every table truncated to garbage.
        const spoil = (dir: string) => {
          for (const name of readdirSync(dir)) {
            const path = join(dir, name);
            if (statSync(path).isDirectory()) spoil(path);
            else writeFileSync(path, "garbage");
          }
        };
        spoil(index);
      }
      let server: ChildServer;
      try {
        server = await startChild(dataDir, env, 60_000);
      } catch (error) {
        figure("faults", `${damage} index: the server did not start: ${(error as Error).message.slice(0, 300)}`);
        throw error;
      }
      const found = await waitForSearch(server, "rebuildable", 5, damage === "corrupted" ? 5_000 : 30_000);
      const line = server
        .output()
        .split("\n")
        .find((l) => /index/i.test(l) && /rebuil/i.test(l));
      const outcome = found < 0 ? `every search answers ${-found}` : `${found} of 5 memories findable after restart`;
      figure("faults", `${damage} index dir: ${outcome}; log: ${line?.replace(/^\S+ /, "") ?? "(no rebuild line)"}`);
      await server.kill("SIGTERM");
      expect(found).toBe(5);
      expect(line).toBeDefined();
    }, 120_000);
  }

  test.skipIf(!mountable())(
    "a read-only data dir: a clear refusal or read-only service, never a crash loop or data change",
    async () => {
      const { dataDir, env } = await seeded("readonly", 2, "frozen");
      const mountPoint = fresh("readonly-mnt");
      const before = fingerprint(dataDir);
      expect(Bun.spawnSync(["mount", "--bind", "-o", "ro", dataDir, mountPoint]).exitCode).toBe(0);
      try {
        const roEnv = { ...env, MNEMO_DATA_DIR: mountPoint };
        let outcome: string;
        try {
          const server = await startChild(mountPoint, roEnv, 30_000);
          const [read] = await call(server, "GET", "/v1/memories");
          const [write] = await call(server, "POST", "/v1/memories", { content: "cannot be stored" });
          const found = await waitForSearch(server, "stored", 1, 5_000);
          const errors = server
            .output()
            .split("\n")
            .filter((l) => / (ERROR|WARN) /.test(l) && !/mock tokens/.test(l))
            .map((l) => l.replace(/^\S+ /, "").slice(0, 140));
          outcome = `started; list ${read}, write ${write}, the write findable: ${found === 1 ? "yes" : found < 0 ? `search answers ${-found}` : "no"}; logged: ${errors[0] ?? "nothing"}`;
          expect(write).not.toBe(500);
          await server.kill("SIGTERM");
        } catch (error) {
          readOnlyStderr = (error as Error).message;
          outcome = `refused to start: ${firstLines(readOnlyStderr.replace(/^.*before listening:\n/s, ""))}`;
        }
        figure("faults", `read-only data dir: ${outcome}`);
      } finally {
        Bun.spawnSync(["umount", mountPoint]);
      }
      expect(fingerprint(dataDir)).toEqual(before);
    },
    90_000,
  );

  test.skipIf(!mountable() || BACKEND !== "sqlite")(
    "a read-only data dir: the refusal is one line naming the dir, without a stack trace",
    () => {
      if (!readOnlyStderr) return;
      expect(readOnlyStderr).not.toMatch(/^\s+at /m);
    },
  );

  test.skipIf(!mountable())(
    "a full disk: writes fail cleanly, the server stays up, and recovers when space returns",
    async () => {
      const mountPoint = fresh("full-mnt");
      expect(Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", mountPoint]).exitCode).toBe(0);
      const dataDir = join(mountPoint, "data");
      mkdirSync(dataDir);
      let server: ChildServer | undefined;
      try {
        const env = childEnv(dataDir, await databaseEnvFor(dataDir));
        server = await startChild(dataDir, env);
        const acked: string[] = [];
        const failures = new Map<number, number>();
        const filler = join(mountPoint, "filler");
        // Fill what is left, then keep writing.
        Bun.spawnSync(["sh", "-c", `head -c 100000000 /dev/zero > ${filler}`]);
        for (let i = 0; i < 200; i++) {
          const [status, body] = await call(server, "POST", "/v1/memories", {
            content: `full disk ${i} ${"x".repeat(2_000)}`,
          });
          if (status === 201) acked.push(body.id);
          else failures.set(status, (failures.get(status) ?? 0) + 1);
        }
        const [health] = await call(server, "GET", "/health");
        rmSync(filler);
        const [after] = await call(server, "POST", "/v1/memories", { content: "space is back" });
        const [, list] = await call(server, "GET", "/v1/memories?limit=1000");
        const listed = new Set((list?.data ?? []).map((m: { id: string }) => m.id));
        figure(
          "faults",
          `full disk (tmpfs 24 MB${BACKEND === "postgres" ? "; the index only, the records are in PostgreSQL" : ""}): ${acked.length} writes acknowledged, refusals ${JSON.stringify(Object.fromEntries(failures))}, /health ${health}, write after space returned ${after}`,
        );
        expect(failures.get(500) ?? 0).toBe(0);
        expect([...failures.keys()].every((status) => status === 507)).toBe(true);
        expect(health).toBe(200);
        expect(after).toBe(201);
        expect(acked.filter((id) => !listed.has(id))).toEqual([]);
      } finally {
        await server?.kill("SIGKILL");
        Bun.spawnSync(["umount", "-l", mountPoint]);
      }
    },
    120_000,
  );

  test("the embeddings endpoint down: writes succeed, search answers, vectors come later", async () => {
    const dataDir = fresh("embed");
    const base = {
      ...(await databaseEnvFor(dataDir)),
      EMBEDDINGS_PROVIDER: "openai",
      EMBEDDINGS_MODEL: "fake-embed",
      EMBEDDINGS_TIMEOUT_MS: "500",
    };
    const down = await startChild(dataDir, childEnv(dataDir, { ...base, EMBEDDINGS_URL: unreachableUrl() }));
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await call(down, "POST", "/v1/memories", { content: `offline vectors ${i}` }))[0]);
    const found = await waitForSearch(down, "offline", 5);
    const [, mode] = await call(down, "POST", "/v1/memories/search", { query: "offline" });
    await down.kill("SIGTERM");
    expect(statuses).toEqual([201, 201, 201, 201, 201]);
    expect(found).toBe(5);

    const upstream = startFakeUpstream();
    try {
      const up = await startChild(dataDir, childEnv(dataDir, { ...base, EMBEDDINGS_URL: upstream.url }));
      const until = Date.now() + 30_000;
      let semantic = "";
      while (Date.now() < until) {
        const [, body] = await call(up, "POST", "/v1/memories/search", { query: "offline vectors" });
        semantic = body?.mode;
        if (semantic === "semantic") break;
        await Bun.sleep(300);
      }
      await up.kill("SIGTERM");
      figure(
        "faults",
        `embeddings endpoint down: 5/5 writes 201, search mode ${mode?.mode} with ${found} results; endpoint back: search mode ${semantic}`,
      );
      expect(semantic).toBe("semantic");
    } finally {
      upstream.stop();
    }
  }, 120_000);

  test.skipIf(!TEST_DATABASE_URL)(
    "PostgreSQL connections cut under load (a TCP proxy): 503s, then recovery without a restart",
    async () => {
      const target = new URL(TEST_DATABASE_URL!);
      // The proxy between Mnemo and PostgreSQL: "restarting PostgreSQL" closes every proxied
      // connection and refuses new ones for a while, as a restarting server does.
      const proxy = startTcpProxy(target.hostname, Number(target.port || 5432));
      const dataDir = fresh("pgcut");
      const direct = new URL((await databaseEnvFor(dataDir)).MNEMO_DATABASE_URL);
      direct.host = `127.0.0.1:${proxy.port}`;
      const server = await startChild(dataDir, childEnv(dataDir, { MNEMO_DATABASE_URL: direct.toString() }));
      try {
        const counts = new Map<number, number>();
        const acked: string[] = [];
        let stop = false;
        const load = async () => {
          for (let i = 0; !stop; i++) {
            const [status, body] = await call(server, "POST", "/v1/memories", {
              content: `through the proxy ${i}`,
            }).catch(() => [0, null] as [number, any]);
            counts.set(status, (counts.get(status) ?? 0) + 1);
            if (status === 201) acked.push(body.id);
          }
        };
        const loaders = [load(), load(), load(), load()];
        await Bun.sleep(500);
        proxy.cut();
        await Bun.sleep(2_000);
        proxy.restore();
        await Bun.sleep(3_000);
        stop = true;
        await Promise.all(loaders);
        if (server.proc.exitCode !== null || server.proc.signalCode) {
          const tail = server
            .output()
            .split("\n")
            .filter((l) => l.trim() && !/^\s+at /.test(l))
            .slice(-4)
            .join(" | ");
          figure(
            "faults",
            `PostgreSQL cut for 2 s under 4 writers: the server process EXITED (${server.proc.exitCode ?? server.proc.signalCode}): ${tail.slice(0, 400)}`,
          );
          throw new Error(`the server exited when its PostgreSQL connections were cut: ${tail}`);
        }
        const [after] = await call(server, "POST", "/v1/memories", { content: "after the cut" });
        const listed = new Set<string>();
        for (let cursor = ""; ; ) {
          const [, page] = await call(
            server,
            "GET",
            `/v1/memories?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
          );
          for (const m of page.data) listed.add(m.id);
          if (!page.nextCursor) break;
          cursor = page.nextCursor;
        }
        const errors = [
          ...new Set(
            server
              .output()
              .split("\n")
              .filter((l) => / ERROR /.test(l))
              .map((l) =>
                l
                  .replace(/^\S+ ERROR /, "")
                  .replace(/requestId="[^"]*" /, "")
                  .slice(0, 160),
              ),
          ),
        ];
        figure(
          "faults",
          `PostgreSQL cut for 2 s under 4 writers: statuses ${JSON.stringify(Object.fromEntries(counts))}, write after recovery ${after}, acknowledged missing ${acked.filter((id) => !listed.has(id)).length}${errors.length ? `; logged errors: ${errors.slice(0, 3).join(" || ")}` : ""}`,
        );
        expect(counts.get(503) ?? 0).toBeGreaterThan(0);
        expect(counts.get(500) ?? 0).toBe(0);
        expect(after).toBe(201);
        expect(acked.filter((id) => !listed.has(id))).toEqual([]);
      } finally {
        await server.kill("SIGKILL");
        proxy.stop();
      }
    },
    120_000,
  );

  test("the LLM gateway down or slow: completions answer 502/504 with an error body, the rest is unaffected", async () => {
    const dataDir = fresh("gateway");
    const upstream = startFakeUpstream();
    const base = { ...(await databaseEnvFor(dataDir)), LLM_GATEWAY_TIMEOUT_MS: "1000" };
    const ask = { model: "fake", messages: [{ role: "user", content: "hello" }] };
    const outcomes: string[] = [];
    try {
      const down = await startChild(dataDir, childEnv(dataDir, { ...base, LLM_GATEWAY_URL: unreachableUrl() }));
      const [downStatus, downBody] = await call(down, "POST", "/v1/chat/completions", ask);
      const [memory] = await call(down, "POST", "/v1/memories", { content: "written while the gateway is down" });
      outcomes.push(`down: ${downStatus} ${downBody?.error?.code}, memory write ${memory}`);
      expect([downStatus, typeof downBody?.error?.message, memory]).toEqual([502, "string", 201]);
      await down.kill("SIGTERM");

      upstream.delayMs = 3_000;
      const slow = await startChild(dataDir, childEnv(dataDir, { ...base, LLM_GATEWAY_URL: upstream.url }));
      const started = performance.now();
      const [slowStatus, slowBody] = await call(slow, "POST", "/v1/chat/completions", ask);
      const waited = Math.round(performance.now() - started);
      const [search] = await call(slow, "POST", "/v1/memories/search", { query: "gateway" });
      outcomes.push(
        `slow (3 s, timeout 1 s): ${slowStatus} ${slowBody?.error?.code} after ${waited} ms, search ${search}`,
      );
      expect([slowStatus, typeof slowBody?.error?.message, search]).toEqual([504, "string", 200]);
      upstream.delayMs = 0;
      const [back] = await call(slow, "POST", "/v1/chat/completions", ask);
      outcomes.push(`back: ${back}`);
      expect(back).toBe(200);
      await slow.kill("SIGTERM");
    } finally {
      upstream.stop();
      figure("faults", `LLM gateway ${outcomes.join("; ")}`);
    }
  }, 90_000);

  test("object storage unreachable: writes still succeed, the index catches up when it returns", async () => {
    const s3 = await startFakeS3("mnemo-fault-s3-");
    const proxy = startTcpProxy("127.0.0.1", s3.port);
    const dataDir = fresh("s3data");
    const env = childEnv(dataDir, {
      ...(await databaseEnvFor(dataDir)),
      ...s3.env("s3://mnemo-index/reliability", `http://127.0.0.1:${proxy.port}`),
    });
    let server: ChildServer | undefined;
    try {
      server = await startChild(dataDir, env);
      expect((await call(server, "POST", "/v1/memories", { content: "stored before the outage" }))[0]).toBe(201);
      expect(await waitForSearch(server, "outage", 1)).toBe(1);
      proxy.cut();
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++)
        statuses.push((await call(server, "POST", "/v1/memories", { content: `unreachable bucket ${i}` }))[0]);
      const [during] = await call(server, "POST", "/v1/memories/search", { query: "outage" });
      await Bun.sleep(2_000);
      proxy.restore();
      const found = await waitForSearch(server, "bucket", 5, 60_000);
      figure(
        "faults",
        `object storage unreachable: writes ${JSON.stringify(statuses)}, search during the outage ${during}; after it returned ${found} of 5 findable`,
      );
      expect(statuses).toEqual([201, 201, 201, 201, 201]);
      expect(during).not.toBe(500);
      expect(found).toBe(5);
    } finally {
      await server?.kill("SIGKILL");
      proxy.stop();
      await s3.close();
    }
  }, 120_000);
});
