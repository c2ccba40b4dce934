import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { all, openSqliteStore, run, sql } from "../src/db/store";
import { tempDir } from "./helpers/server";

// The embedded store's group commit (src/db/sqlite-store.ts): concurrent transactions share
// one COMMIT, each atomic on its own, none acknowledged before the COMMIT.
const dir = tempDir("mnemo-group-commit-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function storeWithTable(name: string) {
  const path = join(dir, `${name}.sqlite`);
  const store = openSqliteStore(path);
  await run(store.db, sql`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`);
  return { store, path };
}

const bodies = async (store: ReturnType<typeof openSqliteStore>) =>
  (await all<{ body: string }>(store.db, sql`SELECT body FROM notes ORDER BY id`)).map((r) => r.body);

test("concurrent transactions each land atomically; a failing one leaves none of its writes and takes none of the others' with it", async () => {
  const { store, path } = await storeWithTable("atomic");
  const results = await Promise.allSettled(
    Array.from({ length: 20 }, (_, i) =>
      store.transaction(async (tx) => {
        await run(tx, sql`INSERT INTO notes (body) VALUES (${`first of ${i}`})`);
        await Promise.resolve();
        await run(tx, sql`INSERT INTO notes (body) VALUES (${`second of ${i}`})`);
        if (i % 5 === 3) throw new Error(`member ${i} fails after writing`);
        return i;
      }),
    ),
  );
  const failed = results.flatMap((r, i) => (r.status === "rejected" ? [i] : []));
  expect(failed).toEqual([3, 8, 13, 18]);
  expect(
    results.filter((r) => r.status === "fulfilled").map((r) => (r as PromiseFulfilledResult<number>).value),
  ).toEqual([0, 1, 2, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, 16, 17, 19]);
  const expected = [0, 1, 2, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, 16, 17, 19].flatMap((i) => [
    `first of ${i}`,
    `second of ${i}`,
  ]);
  expect(await bodies(store)).toEqual(expected);
  await store.close();
  // Durable: another connection reads every acknowledged write after the store closed.
  const other = new Database(path, { readonly: true });
  expect(other.query("SELECT COUNT(*) AS n FROM notes").get()).toEqual({ n: expected.length });
  other.close();
});

test("writes are shared between commits: 40 concurrent transactions take fewer commits than transactions, and a statement waiting meanwhile reads only committed rows", async () => {
  const { store, path } = await storeWithTable("grouped");
  // Each COMMIT appends the pages it changed to the WAL as frames (4 KB + a 24-byte header):
  // 40 commits of one row each would append at least 40.
  const frames = () => Math.max(0, (statSync(`${path}-wal`).size - 32) / (4096 + 24));
  const before = frames();
  let readDuring: string[] | null = null;
  let reading: Promise<void> | null = null;
  const writes = Array.from({ length: 40 }, (_, i) =>
    store.transaction(async (tx) => {
      await run(tx, sql`INSERT INTO notes (body) VALUES (${`note ${i}`})`);
      if (i === 10) {
        // A statement issued while the group is open waits for its COMMIT: it sees whole groups only.
        reading = bodies(store).then((rows) => {
          readDuring = rows;
        });
      }
    }),
  );
  await Promise.all(writes);
  await reading;
  const appended = frames() - before;
  expect(appended).toBeGreaterThan(0);
  expect(appended).toBeLessThan(40);
  expect(readDuring).not.toBeNull();
  // Whatever it saw is a prefix of whole committed members, including member 10's own write.
  expect(readDuring!.length).toBeGreaterThanOrEqual(11);
  expect(readDuring!).toEqual(Array.from({ length: readDuring!.length }, (_, i) => `note ${i}`));
  expect((await bodies(store)).length).toBe(40);
  await store.close();
});
