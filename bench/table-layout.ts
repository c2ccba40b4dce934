/**
 * `bun bench/table-layout.ts [--users 100] [--per-user 1000] [--queries 200] [--seed 42]`:
 * whether the index's table per owner earns its cost, on LanceDB alone (no Mnemo, no HTTP).
 * The same users' texts laid out two ways, each with the server's full-text tokenizer:
 * - one table per user, as Mnemo's index is (docs/architecture.md#the-index-is-partitioned-by-owner);
 * - one shared table with an owner column (a bitmap index on it), searched with a filter on
 *   the owner (LanceDB filters before it ranks), built with 1 user, a tenth of the users, all.
 * For one user it runs the same full-text queries (as the server hands them to LanceDB, limit
 * 40, row ids and scores, sequential, in a fresh session after a warm pass) and prints the
 * latency and how many queries' 40 candidates differ from the user's own table's (the
 * candidates are what Mnemo scores exactly: a different list means others' data shapes what
 * a user can find). Then the disk each layout takes for all the users, and the time to build.
 */
import * as lancedb from "@lancedb/lancedb";
import { Field, Int32, Schema, Utf8 } from "apache-arrow";
import { parseArgs } from "node:util";
import { candidateQuery } from "../src/search/analysis/analyzer";
import { memoryTexts, queryTexts } from "./lib/corpus";
import { cleanup, diskBytes, giveUpAfter, tempDir } from "./lib/harness";
import { directSession, FTS_CONFIG } from "./lib/lance-direct";
import { machineLine } from "./lib/machine";
import { round, summarize, table, timed } from "./lib/stats";

const { values: args } = parseArgs({
  options: {
    users: { type: "string", default: "100" },
    "per-user": { type: "string", default: "1000" },
    queries: { type: "string", default: "200" },
    seed: { type: "string", default: "42" },
  },
});
const USERS = Number(args.users);
const PER_USER = Number(args["per-user"]);
const QUERIES = Number(args.queries);
const SEED = Number(args.seed);
const LIMIT = 40;
const WARMUP = 20;

giveUpAfter(20, "table-layout");
const ownerOf = (user: number) => `user-${String(user).padStart(5, "0")}`;
/** Each user's own texts (the same seed always gives the same ones). */
const textsOf = (user: number) => memoryTexts(SEED * 100_003 + user, PER_USER);
const ownRows = (user: number) => textsOf(user).map((text, i) => ({ id: user * PER_USER + i, text }));
const queries = queryTexts(SEED + 1, QUERIES + WARMUP).map((q) => candidateQuery(q));

/** The user's queries on `name` in `dir` (fresh session; `where`: the owner filter), ids per query and latency. */
async function search(dir: string, name: string, where: string | null) {
  const db = await lancedb.connect(dir, {}, directSession());
  const [t, openMs] = await timed(() => db.openTable(name));
  const ask = (q: string) => {
    const query = t.search(q, "fts") as lancedb.Query;
    if (where) query.where(where);
    return query.select(["id", "_score"]).limit(LIMIT).toArray() as Promise<Array<{ id: number }>>;
  };
  const [, firstMs] = await timed(() => ask(queries[0]!));
  for (const q of queries.slice(1, WARMUP)) await ask(q);
  const times: number[] = [];
  const ids: string[] = [];
  for (const q of queries.slice(WARMUP)) {
    const [value, ms] = await timed(() => ask(q));
    times.push(ms);
    ids.push(
      value
        .map((row) => row.id)
        .sort((a, b) => a - b)
        .join(","),
    );
  }
  t.close();
  return { latency: summarize(times), ids, openMs, firstMs };
}

const ownSchema = new Schema([new Field("id", new Int32(), false), new Field("text", new Utf8(), false)]);
const sharedSchema = new Schema([
  new Field("id", new Int32(), false),
  new Field("owner_id", new Utf8(), false),
  new Field("text", new Utf8(), false),
]);

console.log(`table layout: ${USERS} users × ${PER_USER} memories; ${machineLine()}`);
try {
  // One table per user.
  const ownDir = tempDir("mnemo-bench-layout-own-");
  const ownDb = await lancedb.connect(ownDir, {}, directSession());
  const [, ownBuildMs] = await timed(async () => {
    for (let user = 0; user < USERS; user++) {
      const created = await ownDb.createTable(ownerOf(user), ownRows(user), { schema: ownSchema });
      await created.createIndex("text", { config: lancedb.Index.fts(FTS_CONFIG) });
      created.close();
    }
  });
  const alone = await search(ownDir, ownerOf(0), null);

  // One shared table, at three sizes: the user alone in it, a tenth of the users, all of them.
  const sizes = [...new Set([1, Math.max(1, Math.round(USERS / 10)), USERS])];
  const shared: Array<{ users: number; bytes: number; buildMs: number; result: Awaited<ReturnType<typeof search>> }> =
    [];
  for (const users of sizes) {
    const dir = tempDir("mnemo-bench-layout-shared-");
    const db = await lancedb.connect(dir, {}, directSession());
    const [, buildMs] = await timed(async () => {
      const rows = Array.from({ length: users }, (_, user) =>
        ownRows(user).map((row) => ({ ...row, owner_id: ownerOf(user) })),
      ).flat();
      // One write, as a compacted table would be: no older fragments or versions on disk.
      const created = await db.createTable("shared", rows, { schema: sharedSchema });
      await created.createIndex("text", { config: lancedb.Index.fts(FTS_CONFIG) });
      await created.createIndex("owner_id", { config: lancedb.Index.bitmap() });
      created.close();
    });
    const result = await search(dir, "shared", `owner_id = '${ownerOf(0)}'`);
    shared.push({ users, bytes: diskBytes(dir), buildMs, result });
  }

  const differing = (ids: string[]) => ids.filter((list, i) => list !== alone.ids[i]).length;
  const rows = [
    [
      "own table (as Mnemo)",
      PER_USER,
      alone.latency.p50,
      alone.latency.p99,
      round(alone.openMs, 1),
      round(alone.firstMs, 1),
      "-",
    ],
    ...shared.map(({ users, result }) => [
      `shared table, ${users} user${users === 1 ? "" : "s"}`,
      users * PER_USER,
      result.latency.p50,
      result.latency.p99,
      round(result.openMs, 1),
      round(result.firstMs, 1),
      `${differing(result.ids)} of ${alone.ids.length}`,
    ]),
  ];
  console.log(`\nuser-00000's full-text queries (${QUERIES} after ${WARMUP} warm-up, limit ${LIMIT}, sequential; ms):`);
  console.log(
    table(
      ["layout", "rows in the table", "p50", "p99", "open", "first query", "40 candidates differ from its own table's"],
      rows,
    ),
  );
  const all = shared[shared.length - 1]!;
  const ownBytes = diskBytes(ownDir);
  console.log(
    `\nall ${USERS} users: ${USERS} own tables ${round(ownBytes / 2 ** 20, 1)} MB (${round(ownBytes / USERS / 1024, 1)} KB a table), built in ${round(ownBuildMs / 1000, 1)} s; one shared table ${round(all.bytes / 2 ** 20, 1)} MB, built in ${round(all.buildMs / 1000, 1)} s`,
  );
  console.log(
    `BENCH_JSON ${JSON.stringify({ users: USERS, perUser: PER_USER, alone: alone.latency, ownBytes, ownBuildMs, shared: shared.map(({ users, bytes, buildMs, result }) => ({ users, bytes, buildMs, latency: result.latency, differ: differing(result.ids) })) })}`,
  );
} finally {
  cleanup();
}
