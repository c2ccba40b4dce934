import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { cliDataDirs, killSpawnedServers, runCli, spawnServer } from "./helpers/cli";
import { TEST_DATABASE_URL } from "./helpers/database";

afterEach(killSpawnedServers);
const { root, dataDir } = cliDataDirs("mnemo-cli-doctor-");

/** A stand-in for an OpenAI-compatible gateway: answers every request. */
async function fakeGateway() {
  const server = createServer((_req, res) =>
    res.writeHead(200, { "content-type": "application/json" }).end('{"data":[]}'),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/v1`, close: () => server.close() };
}

const byName = (checks: Array<{ name: string; status: string }>) =>
  Object.fromEntries(checks.map((c) => [c.name, c.status]));

describe("mnemo doctor", () => {
  test("a healthy data dir with a running server: every line green, exit 0; the writer is named", async () => {
    const dir = dataDir("healthy");
    const gateway = await fakeGateway();
    try {
      const env = { LLM_GATEWAY_URL: gateway.url };
      const server = await spawnServer(["--data", dir, "--allow-mock-tokens"], env);
      const written = await fetch(`${server.url}/v1/memories`, {
        method: "POST",
        headers: { authorization: "Bearer mock-token-a", "content-type": "application/json" },
        body: '{"content":"x"}',
      });
      expect(written.status).toBe(201);
      const result = await runCli(["doctor", "--json", "--data", dir], env);
      expect({ exitCode: result.exitCode, stderr: result.stderr }).toEqual({ exitCode: 0, stderr: "" });
      const report = JSON.parse(result.stdout);
      expect(report.ok).toBe(true);
      expect(byName(report.checks)).toEqual({
        "data dir": "ok",
        "data dir permissions": "ok",
        "free disk": "ok",
        "store of record": "ok",
        "index lag": "ok",
        "index writer": "ok",
        "index layout": "ok",
        "memory duplicates": "ok",
        "memory extraction": "ok",
        "embedding model": "ok",
        "upstream gateway": "ok",
        "master key": "ok",
      });
      expect(report.checks.find((c: any) => c.name === "index writer").detail).toContain("(lease live)");
      expect(report.checks.find((c: any) => c.name === "store of record").detail).toContain(
        TEST_DATABASE_URL ? "answers" : "integrity ok",
      );

      // Human form: one line per check, no colour codes outside a terminal.
      const text = await runCli(["doctor", "--data", dir], env);
      expect(text.exitCode).toBe(0);
      expect(text.stdout.trim().split("\n")).toHaveLength(12);
      expect(text.stdout).toStartWith("✔ data dir");
      expect(text.stdout).not.toContain("\u001b[");
    } finally {
      gateway.close();
    }
  });

  test("a data dir others can read is a yellow line naming the paths and the chmod that fixes it", async () => {
    const dir = dataDir("exposed");
    const server = await spawnServer(["--data", dir, "--allow-mock-tokens"]);
    server.proc.kill("SIGTERM");
    await server.proc.exited;
    const fresh = JSON.parse((await runCli(["doctor", "--json", "--data", dir])).stdout);
    expect(fresh.checks.find((c: any) => c.name === "data dir permissions")).toEqual({
      name: "data dir permissions",
      status: "ok",
      detail: "owner-only",
    });
    // As an earlier version left it: the dir and the master key (PostgreSQL: the index, the key is in the environment) open to others.
    const [inside, mode] = TEST_DATABASE_URL ? [join(dir, "index"), 0o755] : [join(dir, "master.key"), 0o644];
    chmodSync(dir, 0o755);
    chmodSync(inside, mode);
    const result = await runCli(["doctor", "--json", "--data", dir]);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).checks.find((c: any) => c.name === "data dir permissions")).toEqual({
      name: "data dir permissions",
      status: "warn",
      detail: `readable or writable by other users: ${dir} (0755), ${inside} (0${mode.toString(8)})`,
      hint: `chmod -R go-rwx '${dir}'`,
    });
    const text = await runCli(["doctor", "--data", dir], { NO_COLOR: "1" });
    expect(text.stdout).toContain(`! data dir permissions  readable or writable by other users: ${dir} (0755)`);
    expect(Bun.spawnSync(["chmod", "-R", "go-rwx", dir]).exitCode).toBe(0);
    expect(
      JSON.parse((await runCli(["doctor", "--json", "--data", dir])).stdout).checks.find(
        (c: any) => c.name === "data dir permissions",
      ).status,
    ).toBe("ok");
  });

  test("red lines give a hint and exit 1: no data dir, a configured gateway that does not answer", async () => {
    const missing = join(root, "missing");
    const result = await runCli(["doctor", "--json", "--data", missing], {
      LLM_GATEWAY_URL: "http://127.0.0.1:9/v1",
      MNEMO_DATABASE_URL: "",
    });
    expect(result.exitCode).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report.ok).toBe(false);
    expect(report.checks.find((c: any) => c.name === "data dir")).toEqual({
      name: "data dir",
      status: "fail",
      detail: `${missing} does not exist`,
      hint: "check --data / MNEMO_DATA_DIR, or run `mnemo serve` once to create it",
    });
    expect(report.checks.find((c: any) => c.name === "upstream gateway")).toMatchObject({
      status: "fail",
      hint: "check LLM_GATEWAY_URL and that the gateway runs",
    });
    const text = await runCli(["doctor", "--data", missing], { NO_COLOR: "1", MNEMO_DATABASE_URL: "" });
    expect([text.exitCode, text.stdout.includes("✘ data dir"), text.stdout.includes("\u001b[")]).toEqual([
      1,
      true,
      false,
    ]);
  });

  test("a corrupt SQLite file: every check is printed, the store's red with the reason, the index checks skipped, the rest run", async () => {
    const dir = dataDir("corrupt");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, "mnemo.sqlite"), Buffer.alloc(8192, 0x5a), { mode: 0o600 });
    const gateway = await fakeGateway();
    try {
      const env = { MNEMO_DATABASE_URL: "", NO_COLOR: "1", LLM_GATEWAY_URL: gateway.url };
      const result = await runCli(["doctor", "--json", "--data", dir], env);
      expect({ exitCode: result.exitCode, stderr: result.stderr }).toEqual({ exitCode: 1, stderr: "" });
      const report = JSON.parse(result.stdout);
      expect(byName(report.checks)).toMatchObject({
        "data dir": "ok",
        "free disk": "ok",
        "store of record": "fail",
        "index lag": "skip",
        "index writer": "skip",
        "index layout": "skip",
        "embedding model": "ok",
        "upstream gateway": "ok",
        "master key": "ok",
      });
      expect(report.checks.find((c: any) => c.name === "store of record")).toEqual({
        name: "store of record",
        status: "fail",
        detail: `cannot open the store of record ${join(dir, "mnemo.sqlite")}: file is not a database`,
        hint: "restore the latest backup (`mnemo restore`), or fix the file's permissions",
      });
      // Human form: a line per check, the skipped ones marked "-".
      const text = await runCli(["doctor", "--data", dir], env);
      expect(text.exitCode).toBe(1);
      const marks = { ok: "✔", warn: "!", fail: "✘", skip: "-" } as Record<string, string>;
      expect(
        text.stdout
          .trim()
          .split("\n")
          .map((line) => line.split(/\s{2,}/)[0]),
      ).toEqual(report.checks.map((c: any) => `${marks[c.status]} ${c.name}`));
    } finally {
      gateway.close();
    }
  });

  test("a PostgreSQL store that does not answer: the same, with the database's error", async () => {
    const dir = dataDir("pg-down");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const env = { MNEMO_DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", SERVER_MASTER_KEY: "7e57".repeat(16) };
    const result = await runCli(["doctor", "--json", "--data", dir], env);
    expect(result.exitCode).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(byName(report.checks)).toMatchObject({
      "store of record": "fail",
      "index lag": "skip",
      "index writer": "skip",
      "embedding model": "ok",
      "master key": "ok",
    });
  });

  test.skipIf(Boolean(TEST_DATABASE_URL))(
    "changes an import queued with no server running show as index lag (red only once older than 10 minutes)",
    async () => {
      const dir = dataDir("lagging");
      const file = join(root, "one.jsonl");
      await Bun.write(file, '{"content":"queued"}\n');
      expect((await runCli(["import", file, "--user", "a", "--data", dir])).exitCode).toBe(0);
      const fresh = JSON.parse((await runCli(["doctor", "--json", "--data", dir])).stdout);
      expect(fresh.checks.find((c: any) => c.name === "index lag")).toMatchObject({
        status: "ok",
        detail: expect.stringContaining("1 change waiting for full-text"),
      });
    },
  );
});
