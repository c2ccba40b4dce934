import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliDataDirs, killSpawnedServers, runCli } from "./helpers/cli";
import { TEST_DATABASE_URL } from "./helpers/database";

afterEach(killSpawnedServers);
const { root, dataDir } = cliDataDirs("mnemo-cli-errors-");

/** An expected failure: exit 1, nothing on stdout, one line on stderr (no stack, no "unexpected error"). */
function oneLineFailure(result: { exitCode: number; stdout: string; stderr: string }) {
  return { exitCode: result.exitCode, stdout: result.stdout, lines: result.stderr.trimEnd().split("\n") };
}

describe("a bad setting names the environment variable or flag", () => {
  test.each([
    [{ MNEMO_PORT: "abc" }, [], "mnemo: MNEMO_PORT: 'abc' is not a whole number from 0 to 65535"],
    [{ MNEMO_INDEX_BATCH: "0" }, ["--port", "0"], "mnemo: MNEMO_INDEX_BATCH: '0' is not a whole number of at least 1"],
    [
      { MNEMO_DATABASE_URL: "mysql://x" },
      ["--port", "0"],
      "mnemo: MNEMO_DATABASE_URL: 'mysql://x' is not a postgres:// or postgresql:// URL",
    ],
    [
      { MNEMO_DATABASE_URL: "mysql://admin:hunter2@db/x" },
      ["--port", "0"],
      "mnemo: MNEMO_DATABASE_URL: 'mysql://…@db/x' is not a postgres:// or postgresql:// URL",
    ],
    [
      { MNEMO_LOG_LEVEL: "verbose" },
      ["--port", "0"],
      "mnemo: MNEMO_LOG_LEVEL: 'verbose' is not one of: debug, info, warn, error",
    ],
    [
      { MNEMO_INDEX_WRITER: "sometimes" },
      ["--port", "0"],
      "mnemo: MNEMO_INDEX_WRITER: 'sometimes' is not one of: auto, never",
    ],
  ])("%j: one line, exit 1, nothing created", async (env, args, message) => {
    const dir = dataDir(`config-${Object.keys(env)[0]}-${Math.random().toString(36).slice(2)}`);
    const result = await runCli(["serve", ...args, "--data", dir], env);
    expect(oneLineFailure(result)).toEqual({ exitCode: 1, stdout: "", lines: [message] });
    expect(existsSync(dir)).toBe(false);
  });

  test("an override given as a flag is named as the flag", async () => {
    const dir = dataDir("flag-host");
    const result = await runCli(["serve", "--host", "", "--port", "0", "--data", dir]);
    expect(oneLineFailure(result)).toEqual({
      exitCode: 1,
      stdout: "",
      lines: ["mnemo: --host: '' is not a non-empty value"],
    });
  });
});

describe("mnemo serve: a start that fails says why in one line and creates nothing", () => {
  test("the port is in use", async () => {
    const holder = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const dir = dataDir("port-in-use");
      const result = await runCli(["serve", "--port", String(holder.port), "--data", dir]);
      expect(oneLineFailure(result)).toEqual({
        exitCode: 1,
        stdout: "",
        lines: [
          `mnemo: cannot listen on 127.0.0.1:${holder.port}: the port is in use; stop what listens there or choose another with --port / MNEMO_PORT`,
        ],
      });
      expect(existsSync(dir)).toBe(false);
    } finally {
      holder.stop(true);
    }
  });

  test("PostgreSQL without SERVER_MASTER_KEY", async () => {
    const dir = dataDir("pg-without-key");
    const result = await runCli(["serve", "--port", "0", "--data", dir], {
      MNEMO_DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
      SERVER_MASTER_KEY: "",
    });
    expect(oneLineFailure(result)).toEqual({
      exitCode: 1,
      stdout: "",
      lines: [
        expect.stringMatching(
          /^mnemo: SERVER_MASTER_KEY is required with PostgreSQL storage \(MNEMO_DATABASE_URL\): .*openssl rand -hex 32/,
        ),
      ],
    });
    expect(existsSync(dir)).toBe(false);
  });

  test("the data dir is a file, or below one", async () => {
    const file = join(root, "a-file");
    writeFileSync(file, "not a folder");
    for (const [dir, message] of [
      [file, `mnemo: data dir ${file} is a file, not a directory; choose another with --data / MNEMO_DATA_DIR`],
      [
        join(file, "data"),
        `mnemo: data dir ${join(file, "data")} cannot be created: ${file} is a file, not a directory; choose another with --data / MNEMO_DATA_DIR`,
      ],
    ]) {
      expect(oneLineFailure(await runCli(["serve", "--port", "0", "--data", dir], { MNEMO_DATABASE_URL: "" }))).toEqual(
        { exitCode: 1, stdout: "", lines: [message] },
      );
    }
  });

  // A read-only bind mount needs root (where a chmod stops nothing); PostgreSQL serves from a read-only data dir, its index writes failing.
  test.skipIf(process.getuid?.() !== 0 || process.platform !== "linux" || Boolean(TEST_DATABASE_URL))(
    "the data dir is on a read-only file system",
    async () => {
      const dir = dataDir("read-only");
      const mount = join(root, "read-only-mount");
      mkdirSync(dir, { recursive: true });
      mkdirSync(mount);
      expect(Bun.spawnSync(["mount", "--bind", "-o", "ro", dir, mount]).exitCode).toBe(0);
      try {
        const result = await runCli(["serve", "--port", "0", "--data", mount]);
        expect(oneLineFailure(result)).toEqual({
          exitCode: 1,
          stdout: "",
          lines: [
            `mnemo: data dir ${mount} is on a read-only file system; fix the permissions or choose another with --data / MNEMO_DATA_DIR`,
          ],
        });
      } finally {
        Bun.spawnSync(["umount", mount]);
      }
    },
  );

  test.skipIf(Boolean(TEST_DATABASE_URL))("a store that cannot be opened leaves no master key behind", async () => {
    const dir = dataDir("store-unopenable");
    // A folder where the SQLite file should be.
    mkdirSync(join(dir, "mnemo.sqlite"), { recursive: true });
    const result = await runCli(["serve", "--port", "0", "--data", dir]);
    expect(oneLineFailure(result)).toEqual({
      exitCode: 1,
      stdout: "",
      lines: [expect.stringMatching(/^mnemo: cannot open the store of record .*mnemo\.sqlite: /)],
    });
    expect(existsSync(join(dir, "master.key"))).toBe(false);
  });
});

describe("other commands fail in one line too", () => {
  test("export --out into a folder that does not exist names --out, not the .partial file", async () => {
    const result = await runCli([
      "export",
      "--user",
      "a",
      "--out",
      "/nonexistent/dir/x.jsonl",
      "--data",
      dataDir("export"),
    ]);
    expect(oneLineFailure(result)).toEqual({
      exitCode: 1,
      stdout: "",
      lines: ["mnemo: --out /nonexistent/dir/x.jsonl: the folder /nonexistent/dir does not exist"],
    });
  });

  test("export --out a folder", async () => {
    const result = await runCli(["export", "--user", "a", "--out", root, "--data", dataDir("export-folder")]);
    expect(oneLineFailure(result)).toEqual({
      exitCode: 1,
      stdout: "",
      lines: [`mnemo: --out ${root}: is a folder; give a file name`],
    });
  });

  test("a MNEMO_DATABASE_URL that is not PostgreSQL's, or a database that does not answer, for commands that read only the environment", async () => {
    const data = dataDir("database-url");
    // The driver's own reason for a refused connection depends on which of the socket's
    // events comes first (on a busy machine its close can beat its error): either is said.
    const unreachable =
      /^mnemo: the PostgreSQL store of record \(MNEMO_DATABASE_URL\) cannot be reached: (connect ECONNREFUSED 127\.0\.0\.1:1|Connection terminated unexpectedly)$/;
    for (const [url, line] of [
      [
        "mysql://admin:hunter2@db/x",
        "mnemo: MNEMO_DATABASE_URL: 'mysql://…@db/x' is not a postgres:// or postgresql:// URL",
      ],
      ["postgres://nobody@127.0.0.1:1/none", expect.stringMatching(unreachable)],
    ] as const) {
      for (const args of [
        ["keys", "list"],
        ["dev-token", "create", "--user", "a"],
      ]) {
        const result = await runCli([...args, "--data", data], { MNEMO_DATABASE_URL: url });
        expect({ args, ...oneLineFailure(result) }).toEqual({ args, exitCode: 1, stdout: "", lines: [line] });
      }
    }
  });

  test("backup --out below a file", async () => {
    const file = join(root, "backup-file");
    writeFileSync(file, "x");
    const data = dataDir("backup");
    expect((await runCli(["keys", "list", "--data", data])).exitCode).toBe(0);
    const result = await runCli(["backup", "--out", join(file, "b"), "--data", data]);
    expect(oneLineFailure(result)).toEqual({
      exitCode: 1,
      stdout: "",
      lines: [`mnemo: cannot create ${join(file, "b")}: a part of the path is a file, not a directory`],
    });
  });

  test.skipIf(Boolean(TEST_DATABASE_URL))("a --data below a file, for commands that open the store", async () => {
    const file = join(root, "another-file");
    writeFileSync(file, "x");
    for (const args of [
      ["keys", "list"],
      ["escrow", "status", "--user", "a"],
      ["reindex"],
      ["import", file, "--user", "a"],
    ]) {
      const result = await runCli([...args, "--data", join(file, "data")]);
      expect({ args, ...oneLineFailure(result) }).toEqual({
        args,
        exitCode: 1,
        stdout: "",
        lines: [expect.stringMatching(/^mnemo: cannot open the store of record .*: ENOTDIR/)],
      });
    }
  });
});
