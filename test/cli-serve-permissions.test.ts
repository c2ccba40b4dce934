import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliDataDirs, killSpawnedServers, spawnServer } from "./helpers/cli";

afterEach(killSpawnedServers);
const { dataDir } = cliDataDirs("mnemo-serve-permissions-");

/** What a server started on `dir` wrote to stderr by the time it listened, its warnings about the data dir. */
async function dataDirWarnings(dir: string): Promise<string[]> {
  const server = await spawnServer(["--data", dir]);
  server.proc.kill("SIGTERM");
  await server.proc.exited;
  return (await server.stderr()).split("\n").filter((line) => line.includes("data dir"));
}

describe("mnemo serve on a data dir other users can open", () => {
  test("warns once, in one line naming the chmod to run", async () => {
    const dir = dataDir("open");
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, "notes.txt"), "left here by hand");
    chmodSync(join(dir, "notes.txt"), 0o644);
    // Below a directory other users cannot enter, an open file is out of their reach.
    mkdirSync(join(dir, "closed"), { mode: 0o700 });
    writeFileSync(join(dir, "closed", "inside.txt"), "unreachable", { mode: 0o644 });
    chmodSync(join(dir, "closed", "inside.txt"), 0o644);
    expect(await dataDirWarnings(dir)).toEqual([
      `mnemo: warning: data dir ${dir} is readable or writable by other users: ${dir} (0755), ${join(dir, "notes.txt")} (0644); run chmod -R go-rwx '${dir}'`,
    ]);
  });

  test("says nothing for an owner-only data dir, or one it creates", async () => {
    const existing = dataDir("owner-only");
    mkdirSync(existing, { recursive: true });
    chmodSync(existing, 0o700);
    expect(await dataDirWarnings(existing)).toEqual([]);
    expect(await dataDirWarnings(dataDir("fresh"))).toEqual([]);
  });
});
