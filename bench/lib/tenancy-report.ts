/** The printed tables of `--mode tenancy` (tenancy.ts): figures side by side, with ratios. */
import type { SearchResult } from "./speed";
import { round, table, type Summary } from "./stats";
import type { IngestSummary, SingleUserRun, Tables, TenancyResult, TenantServerRun } from "./tenancy";

/** Issue target: a user's search among many users within this factor of the same search alone. */
export const TENANCY_TARGET = 1.3;

const ms = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? "-" : String(round(v, 1)));
const pair = (s: Summary | null | undefined) => (s ? `${ms(s.p50)}/${ms(s.p99)}` : "-");
const ratio = (a: number, b: number) => (b > 0 && Number.isFinite(a) ? `${(a / b).toFixed(2)}×` : "-");
const tables = (t: Tables) => `${t.open} open / ${t.total} tables${t.vector ? ` (${t.vector} vector)` : ""}`;

function indexLine(i: IngestSummary): string {
  const state = (name: string, t: IngestSummary["table"]) =>
    t
      ? `${name} ${t.rows} rows in ${t.fragments} fragment(s), indices ${t.indices.map((x) => `${x.type} ${x.indexed}/${x.unindexed}`).join(", ") || "none"}`
      : `${name} -`;
  return [state("text table", i.table), i.vectors ? state("vector table", i.vectors) : ""].filter(Boolean).join("; ");
}

function ingestLine(i: IngestSummary, clients: number): string {
  return (
    `ingest ${i.memories} with ${clients} clients: ${i.perSecond} mem/s (${round(i.wallMs / 1000, 1)} s; request p50/p99 ${pair(i.request)} ms), ` +
    `then catch-up ${i.catchUpMs} ms + optimize ${i.settleMs} ms; index ${i.lanceMB} MB; server RSS ${i.rssMB} MB (peak ${i.peakRssMB ?? "-"} MB)` +
    (i.log.error ? `; SERVER LOGGED ${i.log.error} ERROR(S) (see stderr)` : "")
  );
}

/** One latency row: label, then the summary's columns. */
const row = (label: string, s: Summary | null, extra: Array<string | number> = []): Array<string | number> =>
  s ? [label, s.n, ms(s.p50), ms(s.p95), ms(s.p99), ms(s.max), ...extra] : [label, "-", "-", "-", "-", "-", ...extra];

function strategies(s: SearchResult): string {
  return Object.entries(s.modes)
    .map(([k, v]) => `${k}×${v}`)
    .join(" ");
}

function printSingleUser(r: TenancyResult): void {
  const o = r.options;
  const f: SingleUserRun = r.fullText;
  const d = r.direct;
  const [serverQ, rawQ] = d.searches;
  console.log(
    `\n=== 1. One user, ${o.scale} memories, full-text only (EMBEDDINGS_PROVIDER=none): Mnemo over HTTP vs LanceDB directly ===`,
  );
  console.log(`Mnemo: ${ingestLine(f.ingest, o.clients)}`);
  console.log(
    `       ${indexLine(f.ingest)}; searched in a server restarted on the data: RSS after searching ${f.rssMB} MB, ${tables(f.tables)}`,
  );
  console.log(
    `LanceDB direct: same ${d.rows} texts in one table (id, text) in a temp dir, created in ${d.createMs} ms, one FTS index (tokenizer of lance-schema.ts fullTextIndex) in ${d.indexMs} ms; ` +
      `reopened in a fresh session per query form; table.search(q, "fts").select(["id","_score"]).limit(${d.limit}), in this process (no HTTP)`,
  );
  console.log(
    `\nFull-text search latency (ms; ${o.queries} queries after ${o.warmup} warm-up, sequential, the same queries everywhere; Mnemo at limit 10 asks LanceDB for ${d.limit})`,
  );
  console.log(
    table(
      ["what", "n", "p50", "p95", "p99", "max", "mean results", "note"],
      [
        row("Mnemo HTTP (restarted server)", f.search.http, [f.search.meanResults, strategies(f.search)]),
        row("  in the engine (server side)", f.search.engine, ["", "flush + LanceDB + store read-back"]),
        row("  LanceDB searchText in the server", f.search.text, [
          "",
          "match on text (no session: no context); addresses + scores, ids from the address map",
        ]),
        row("  outside the engine", f.search.outsideEngine, ["", "HTTP, routing, auth, JSON"]),
        row("LanceDB direct, queries as Mnemo sends them", serverQ.latency, [
          serverQ.meanResults,
          `query-text.ts fullTextQuery(q)${serverQ.failed ? `; ${serverQ.failed} failed` : ""}`,
        ]),
        row("LanceDB direct, queries as typed", rawQ.latency, [
          rawQ.meanResults,
          `raw strings${rawQ.failed ? `; ${rawQ.failed} failed` : ""}`,
        ]),
      ],
    ),
  );
  const h = f.search.http;
  console.log(
    `Mnemo HTTP / LanceDB direct (queries as Mnemo sends them): p50 ${ratio(h.p50, serverQ.latency.p50)}, p99 ${ratio(h.p99, serverQ.latency.p99)}`,
  );
  console.log(
    `Mnemo HTTP / LanceDB direct (queries as typed):            p50 ${ratio(h.p50, rawQ.latency.p50)}, p99 ${ratio(h.p99, rawQ.latency.p99)}`,
  );
  if (f.search.text)
    console.log(
      `LanceDB inside Mnemo / LanceDB direct (same queries): p50 ${ratio(f.search.text.p50, serverQ.latency.p50)}, p99 ${ratio(f.search.text.p99, serverQ.latency.p99)}`,
    );
  const slow = f.search.slowest.map((q) => `${q.ms} ms "${q.query}"`).join("; ");
  console.log(`Mnemo's slowest: ${slow}`);
}

function printHybrid(r: TenancyResult): void {
  const o = r.options;
  const hy = r.hybrid;
  if (!hy) {
    console.log(`\n=== 1b. Hybrid: skipped (--hybrid 0) ===`);
    return;
  }
  const count = hy.ingest.memories;
  const smaller =
    count < o.scale
      ? ` — NOT ${o.scale}: run at ${count} memories (--hybrid ${count}) to keep the fake-embedder ingest short on this machine`
      : "";
  console.log(
    `\n=== 1b. One user, ${count} memories, hybrid (the tests' fake embedder, 384-d, in its own process)${smaller} ===`,
  );
  console.log(`Mnemo: ${ingestLine(hy.ingest, o.clients)}`);
  console.log(
    `       ${indexLine(hy.ingest)}; searched in a server restarted on the data: RSS after searching ${hy.rssMB} MB, ${tables(hy.tables)}`,
  );
  const s = hy.search;
  console.log(
    table(
      ["what", "n", "p50", "p95", "p99", "max", "mean results", "note"],
      [
        row("Mnemo HTTP hybrid (restarted server)", s.http, [s.meanResults, strategies(s)]),
        row("  excl. query embedding", s.httpExclEmbed, ["", "HTTP minus the fake embedder's round trip"]),
        row("  query embedding", s.embed, ["", "fake embedder over HTTP"]),
        row("  LanceDB full-text in the server", s.text, ["", "concurrent with the vector search"]),
        row("  LanceDB vector in the server", s.vector, ["", ""]),
      ],
    ),
  );
}

function printTenants(r: TenancyResult): void {
  const o = r.options;
  const a: TenantServerRun = r.alone;
  const m: TenantServerRun = r.shared;
  console.log(
    `\n=== 2. One user (${r.user}, ${o.perUser} memories) alone vs among ${m.users} users × ${o.perUser} (${m.ingest.memories} memories), full-text only ===`,
  );
  console.log(`alone:     ${ingestLine(a.ingest, o.clients)}`);
  console.log(`${m.users} users: ${ingestLine(m.ingest, o.clients)}`);
  console.log(
    `           (the ${o.clients} clients take the users in turn: memory i of every user, then memory i+1, …; each request as its user)`,
  );
  console.log(`${r.user}'s tables: alone: ${indexLine(a.ingest)}`);
  console.log(`${" ".repeat(r.user.length)}           among ${m.users}: ${indexLine(m.ingest)}`);
  console.log(
    `LanceDB tables in the ${m.users}-user server (open handles / tables in the index): after ingest ${tables(m.tablesAfterIngest)}; after catch-up and optimize ${tables(m.tablesAfterSettle)}; ` +
      `after ${r.user}'s searches ${tables(m.tablesAfterSearch)}; restarted, after its searches ${tables(m.tablesRestarted)}`,
  );
  console.log(
    `server RSS (${m.users} users): ${m.ingest.rssMB} MB after ingest and optimize (peak ${m.ingest.peakRssMB ?? "-"} MB), ${m.rssAfterSearchMB} MB after the searches; restarted ${m.rssRestartedMB} MB. ` +
      `Alone: ${a.ingest.rssMB} MB, ${a.rssAfterSearchMB} MB, restarted ${a.rssRestartedMB} MB`,
  );
  console.log(
    `\n${r.user}'s search latency over HTTP (ms; ${o.queries} queries after ${o.warmup} warm-up, sequential, one client, limit 10)`,
  );
  const rows: Array<Array<string | number>> = [];
  const checks: string[] = [];
  for (const [when, alone, shared] of [
    ["in the server that ingested", a.live, m.live],
    ["restarted on the data", a.restarted, m.restarted],
  ] as const) {
    rows.push(row(`alone, ${when}`, alone.http, [pair(alone.engine), pair(alone.text), alone.meanResults]));
    rows.push(
      row(`among ${m.users} users, ${when}`, shared.http, [pair(shared.engine), pair(shared.text), shared.meanResults]),
    );
    const p50 = shared.http.p50 / alone.http.p50;
    const p99 = shared.http.p99 / alone.http.p99;
    rows.push([
      `  ratio ${m.users} users / alone`,
      "",
      ratio(shared.http.p50, alone.http.p50),
      ratio(shared.http.p95, alone.http.p95),
      ratio(shared.http.p99, alone.http.p99),
      ratio(shared.http.max, alone.http.max),
      "",
      "",
      "",
    ]);
    const ok = (x: number) => (x <= TENANCY_TARGET ? "ok" : "MISSED");
    checks.push(`${when}: p50 ${p50.toFixed(2)}× ${ok(p50)}, p99 ${p99.toFixed(2)}× ${ok(p99)}`);
  }
  console.log(
    table(["server", "n", "p50", "p95", "p99", "max", "engine p50/p99", "LanceDB p50/p99", "mean results"], rows),
  );
  console.log(
    `target (a user's search among ${m.users} users within ${TENANCY_TARGET}× of the same user alone): ${checks.join("; ")}`,
  );
}

/** Everything, in order; a short summary of the headline figures last. */
export function printTenancy(r: TenancyResult): void {
  printSingleUser(r);
  printHybrid(r);
  printTenants(r);
  const f = r.fullText.search.http;
  const d = r.direct.searches[0].latency;
  const m = r.shared;
  console.log(
    `\nSummary (ms, p50/p99): one user at ${r.options.scale}: Mnemo full-text ${pair(f)} vs LanceDB direct ${pair(d)} (${ratio(f.p50, d.p50)}/${ratio(f.p99, d.p99)})` +
      (r.hybrid ? `; hybrid at ${r.hybrid.ingest.memories} ${pair(r.hybrid.search.http)}` : "") +
      `; ${r.user} alone ${pair(r.alone.restarted.http)} vs among ${m.users} users ${pair(m.restarted.http)} restarted (${ratio(m.restarted.http.p50, r.alone.restarted.http.p50)}/${ratio(m.restarted.http.p99, r.alone.restarted.http.p99)}), ` +
      `live ${pair(r.alone.live.http)} vs ${pair(m.live.http)} (${ratio(m.live.http.p50, r.alone.live.http.p50)}/${ratio(m.live.http.p99, r.alone.live.http.p99)}); ` +
      `${m.users}-user ingest ${m.ingest.perSecond} mem/s; RSS ${m.rssAfterSearchMB} MB; ${tables(m.tablesAfterSearch)}`,
  );
}
