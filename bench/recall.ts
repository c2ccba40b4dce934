/**
 * `npm run bench:recall -- --data ../shared/bench/locomo`: LoCoMo recall of
 * POST /v1/memories/search, as docs/retrieval.md#retrieval-quality describes the protocol.
 *
 *   bun bench/recall.ts --data DIR [--provider none|openai|local] [--embeddings-url URL]
 *                       [--embeddings-model NAME] [--models-dir DIR] [--in-process] [--compact-before-search]
 *                       [--without-session-id] [--without-timestamp] [--signals LIST]... [--no-ablations]
 *
 * Per conversation a fresh user stores every turn as one memory ("<speaker>: <text>",
 * plus " [shares <caption>]", metadata {dia_id, session}); the index is drained; then
 * every question of categories 1–4 is searched with limit 10. recall@k is the mean over
 * questions of the fraction of its evidence turns among the top k. `local` never
 * downloads: without model files the server answers full-text and the bench says so.
 * `--compact-before-search` runs the index's optimize after the drain (what the indexer
 * does by itself after 20 s of quiet), to measure the steady state rather than fresh rows.
 * Every turn is also stored with `session_id: "<conversation>-<session>"`, as a chat client
 * stores the turns of one conversation (the server treats neighbouring turns of a session_id
 * as each other's context). `--without-session-id` stores exactly the protocol's fields
 * only, for comparison. Every turn carries its session's date (`session_N_date_time`, read as
 * UTC) as the memory's `timestamp`, so dates in questions can match when things were said;
 * `--without-timestamp` leaves it out (the memories are then dated when stored).
 *
 * Ablations: after the ingest, the questions are searched once per signal set, the set sent
 * as `signals` in the search request ("text" full text, "words" the word vectors, "time" dates
 * in the query, "vector" the embedding model), and R@1/5/10 per category are printed side by
 * side. The sets: "all" (no `signals`: every signal available), then by default "text" alone
 * and all but one signal for each signal ("vector" only with a provider); `--signals a,b`
 * (repeatable) runs those sets instead of the default ones; `--no-ablations` runs "all" only.
 * Latency and the per-conversation table are the "all" run's.
 *
 * Sets: `--data` may be given several times; without it the bench runs every set it knows,
 * the development set (../shared/bench/locomo, when present) and the two held-out sets
 * (bench/heldout, bench/heldout-chats). After the sets' own tables, one summary prints per
 * set a row per signal set and a baseline row, LanceDB's own full-text search on the same
 * texts (bench/lib/lance-fts-baseline.ts), with R@1/5/10, multi-hop R@5 and R@5 over the baseline.
 */
import { parseArgs } from "node:util";
import { client } from "./lib/client";
import { cleanup, giveUpAfter, removeDir, startBenchServer, tempDir } from "./lib/harness";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { lanceFtsBaseline } from "./lib/lance-fts-baseline";
import { loadConversations, type Conversation } from "./lib/locomo";
import { machine, machineLine, treeLine } from "./lib/machine";
import type { IndexState } from "./lib/server-ops";
import { round, summarize, table, type Summary } from "./lib/stats";

const USAGE =
  "usage: npm run bench:recall -- [--data DIR]... [--provider none|openai|local] [--embeddings-url URL] [--embeddings-model NAME] [--models-dir DIR] [--in-process] [--compact-before-search] [--without-session-id] [--without-timestamp] [--signals text,words,time,vector]... [--no-ablations]";
const SIGNALS = ["text", "words", "time", "vector"] as const;
const KS = [1, 5, 10] as const;
const WARMUP = 3;

function fail(message: string): never {
  console.error(`bench:recall: ${message}\n${USAGE}`);
  process.exit(2);
}

function parse() {
  return parseArgs({
    options: {
      data: { type: "string", multiple: true },
      provider: { type: "string", default: "none" },
      "embeddings-url": { type: "string" },
      "embeddings-model": { type: "string", default: "text-embedding-3-small" },
      "models-dir": { type: "string" },
      "in-process": { type: "boolean", default: false },
      "compact-before-search": { type: "boolean", default: false },
      "without-session-id": { type: "boolean", default: false },
      "without-timestamp": { type: "boolean", default: false },
      signals: { type: "string", multiple: true },
      "no-ablations": { type: "boolean", default: false },
    },
  });
}
let parsed: ReturnType<typeof parse>;
try {
  parsed = parse();
} catch (error) {
  fail((error as Error).message);
}
const args = parsed.values;
const DEFAULT_SETS = [
  join(import.meta.dir, "..", "..", "shared", "bench", "locomo"),
  join(import.meta.dir, "heldout"),
  join(import.meta.dir, "heldout-chats"),
];
const dataDirs = args.data?.length ? args.data : DEFAULT_SETS.filter((dir) => existsSync(dir));
const provider = args.provider!;
if (!["none", "openai", "local"].includes(provider)) fail(`--provider must be none, openai or local (got ${provider})`);
if (provider === "openai" && !args["embeddings-url"])
  fail("--provider openai needs --embeddings-url (an OpenAI-compatible …/v1 base URL)");

const sets: Array<{ data: string; conversations: Conversation[] }> = dataDirs.map((data) => {
  let conversations: Conversation[] = [];
  try {
    conversations = loadConversations(data);
  } catch (error) {
    fail(`cannot read --data ${data}: ${(error as Error).message}`);
  }
  if (!conversations.length) fail(`no LoCoMo conversation (a JSON file with "qa") in ${data}`);
  return { data, conversations };
});
const conversationCount = sets.reduce((n, set) => n + set.conversations.length, 0);

/** The signal sets to search with, by name; "all" (null: no `signals` field) first. */
const signalSets = new Map<string, string[] | null>([["all", null]]);
if (!args["no-ablations"]) {
  const chosen = args.signals?.map((list) =>
    list
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  );
  const defaults = [
    ["text"],
    ...SIGNALS.filter((s) => s !== "vector" || provider !== "none").map((left) =>
      SIGNALS.filter((s) => s !== left && (s !== "vector" || provider !== "none")),
    ),
  ];
  for (const set of chosen ?? defaults) {
    const unknown = set.filter((s) => !(SIGNALS as readonly string[]).includes(s));
    if (unknown.length || !set.length)
      fail(`--signals takes a comma list of ${SIGNALS.join(", ")} (got "${set.join(",")}")`);
    const name = [...new Set(set)].join("+");
    signalSets.set(name, [...new Set(set)]);
  }
}
giveUpAfter(5 + conversationCount * 5 * signalSets.size, "bench:recall");

function serverEnv(): Record<string, string> {
  if (provider === "openai") {
    const url = args["embeddings-url"]!;
    if (!/^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:|\/|$)/.test(url))
      console.warn(`note: ${url} is not on this machine; the bench will use the network`);
    return {
      EMBEDDINGS_PROVIDER: "openai",
      EMBEDDINGS_URL: url,
      EMBEDDINGS_MODEL: args["embeddings-model"]!,
      ...(process.env.EMBEDDINGS_API_KEY ? { EMBEDDINGS_API_KEY: process.env.EMBEDDINGS_API_KEY } : {}),
    };
  }
  if (provider === "local") {
    const modelsDir = args["models-dir"] ?? process.env.MNEMO_MODELS_DIR;
    return {
      EMBEDDINGS_PROVIDER: "local",
      MNEMO_MODEL_DOWNLOAD: "0",
      ...(modelsDir ? { MNEMO_MODELS_DIR: modelsDir } : {}),
      ...(process.env.MNEMO_LOCAL_MODEL ? { MNEMO_LOCAL_MODEL: process.env.MNEMO_LOCAL_MODEL } : {}),
    };
  }
  return { EMBEDDINGS_PROVIDER: "none" };
}

interface ConversationResult {
  name: string;
  turns: number;
  questions: number;
  recall: Record<string, number>;
  byCategory: Record<string, { questions: number; r5: number }>;
  search: Summary;
  ingestMs: number;
  drainMs: number;
  modes: Record<string, number>;
  perQuestion: Array<{ category: number; hits: number[] }>;
  /** Per signal set (see the top): each question's hits and the modes that ranked. */
  perSet: Map<string, { perQuestion: Array<{ category: number; hits: number[] }>; modes: Record<string, number> }>;
  latencies: number[];
  /** The conversation user's own index partition as the questions were searched. */
  index: IndexState;
}

type Ops = {
  drain(): Promise<number>;
  settle(): Promise<number>;
  compact(): Promise<number>;
  state(ownerId: string): Promise<IndexState>;
};

async function runConversation(
  url: string,
  ops: Ops,
  conversation: Conversation,
  runTag: string,
): Promise<ConversationResult> {
  const user = `locomo-${conversation.name}-${runTag}`;
  const api = client(url, user);
  const ingestStart = performance.now();
  for (const turn of conversation.turns) {
    const extra = {
      ...(args["without-session-id"] ? {} : { session_id: `${conversation.name}-${turn.session}` }),
      ...(args["without-timestamp"] || !turn.timestamp ? {} : { timestamp: turn.timestamp }),
    };
    await api.addMemory(turn.content, { dia_id: turn.diaId, session: turn.session }, extra);
  }
  const ingestMs = performance.now() - ingestStart;
  const drainMs = (await ops.drain()) + (await ops.settle());
  if (args["compact-before-search"]) await ops.compact();
  const index = await ops.state(user);
  for (const q of conversation.questions.slice(0, WARMUP)) await api.search(q.question, 10);

  const latencies: number[] = [];
  const perSet: ConversationResult["perSet"] = new Map();
  for (const [name, signals] of signalSets) {
    const modes: Record<string, number> = {};
    const perQuestion: ConversationResult["perQuestion"] = [];
    for (const q of conversation.questions) {
      const start = performance.now();
      const response = await api.search(q.question, 10, signals ? { signals } : {});
      if (name === "all") latencies.push(performance.now() - start);
      const key = `${response.mode}/${response.strategy}`;
      modes[key] = (modes[key] ?? 0) + 1;
      const ranked = response.results.map((r) => String(r.metadata.dia_id));
      const evidence = new Set(q.evidence);
      // fraction of evidence found in the top k, for each k
      perQuestion.push({
        category: q.category,
        hits: KS.map((k) => ranked.slice(0, k).filter((id) => evidence.has(id)).length / evidence.size),
      });
    }
    perSet.set(name, { perQuestion, modes });
  }
  const { perQuestion, modes } = perSet.get("all")!;
  return {
    name: conversation.name,
    turns: conversation.turns.length,
    questions: conversation.questions.length,
    recall: recallOf(perQuestion),
    byCategory: byCategory(perQuestion),
    search: summarize(latencies),
    ingestMs: round(ingestMs, 0),
    drainMs: round(drainMs, 0),
    modes,
    perQuestion,
    perSet,
    latencies,
    index,
  };
}

function recallOf(perQuestion: Array<{ hits: number[] }>): Record<string, number> {
  return Object.fromEntries(
    KS.map((k, i) => [`R@${k}`, round(perQuestion.reduce((s, q) => s + q.hits[i], 0) / (perQuestion.length || 1), 3)]),
  );
}

function byCategory(perQuestion: Array<{ category: number; hits: number[] }>) {
  const out: Record<string, { questions: number; r5: number }> = {};
  for (const category of [1, 2, 3, 4]) {
    const qs = perQuestion.filter((q) => q.category === category);
    if (qs.length) out[category] = { questions: qs.length, r5: recallOf(qs)["R@5"] };
  }
  return out;
}

const fmtModes = (modes: Record<string, number>) =>
  Object.entries(modes)
    .map(([k, v]) => `${k}×${v}`)
    .join(" ");

/** One set's figures for the summary: per signal set and for the LanceDB baseline, each question's hits. */
type SetFigures = { data: string; perSet: Map<string, Array<{ category: number; hits: number[] }>> };

async function main() {
  console.log(machineLine());
  console.log(treeLine());
  const figures: SetFigures[] = [];
  for (const set of sets) figures.push(await runSet(set.data, set.conversations));
  console.log(
    `\nSummary: every set, every signal set, and LanceDB's own full-text search on the same texts (limit 10)`,
  );
  const rows: (string | number)[][] = [];
  for (const { data, perSet } of figures) {
    const baseline = recallOf(perSet.get(BASELINE)!)["R@5"];
    for (const [name, qs] of perSet) {
      const r = recallOf(qs);
      const multiHop = qs.filter((q) => q.category === 1);
      rows.push([
        data.replace(/^.*\/(shared\/bench\/|bench\/)/, ""),
        name,
        qs.length,
        ...KS.map((k) => r[`R@${k}`].toFixed(3)),
        multiHop.length ? recallOf(multiHop)["R@5"].toFixed(3) : "-",
        name === BASELINE ? "" : (r["R@5"] - baseline >= 0 ? "+" : "") + (r["R@5"] - baseline).toFixed(3),
      ]);
    }
  }
  console.log(table(["set", "signals", "questions", "R@1", "R@5", "R@10", "multi-hop R@5", "R@5 − lancedb-fts"], rows));
}

const BASELINE = "lancedb-fts";

async function runSet(data: string, conversations: Conversation[]): Promise<SetFigures> {
  const dir = tempDir("mnemo-recall-");
  const server = await startBenchServer({ dataDir: dir, env: serverEnv(), inProcess: args["in-process"] });
  console.log(
    `\nserver: ${server.where}; provider ${provider}; ${args["compact-before-search"] ? "index compacted after each drain; " : ""}${args["without-session-id"] ? "no session_id (issue protocol fields only); " : "session_id per LoCoMo session; "}${args["without-timestamp"] ? "no timestamp; " : "timestamp = session date; "}signal sets ${[...signalSets.keys()].join(", ")}; data ${data} (${conversations.length} conversations)`,
  );
  const results: ConversationResult[] = [];
  try {
    const runTag = Date.now().toString(36);
    for (const conversation of conversations) {
      process.stderr.write(
        `  ${conversation.name}: ${conversation.turns.length} turns, ${conversation.questions.length} questions…\n`,
      );
      results.push(await runConversation(server.url, server.ops, conversation, runTag));
    }
  } finally {
    await server.stop();
    removeDir(dir);
  }
  const perSetFigures: SetFigures["perSet"] = new Map(
    [...signalSets.keys()].map((name) => [name, results.flatMap((r) => r.perSet.get(name)!.perQuestion)]),
  );
  perSetFigures.set(BASELINE, await lanceFtsBaseline(conversations, KS));

  const all = results.flatMap((r) => r.perQuestion);
  const overall = { recall: recallOf(all), byCategory: byCategory(all) };
  const latencies = summarize(results.flatMap((r) => r.latencies));
  const modes: Record<string, number> = {};
  for (const r of results) for (const [k, v] of Object.entries(r.modes)) modes[k] = (modes[k] ?? 0) + v;

  console.log(`\nLoCoMo recall (categories 1–4, limit 10; search latency over HTTP in ms)`);
  const r3 = (v: number) => v.toFixed(3);
  const ms1 = (v: number) => v.toFixed(1);
  console.log(
    table(
      [
        "conversation",
        "turns",
        "questions",
        "R@1",
        "R@5",
        "R@10",
        "p50",
        "p99",
        "ingest ms",
        "drain ms",
        "mode/strategy",
      ],
      [
        ...results.map((r) => [
          r.name,
          r.turns,
          r.questions,
          r3(r.recall["R@1"]),
          r3(r.recall["R@5"]),
          r3(r.recall["R@10"]),
          ms1(r.search.p50),
          ms1(r.search.p99),
          r.ingestMs,
          r.drainMs,
          fmtModes(r.modes),
        ]),
        [
          "overall",
          results.reduce((s, r) => s + r.turns, 0),
          all.length,
          r3(overall.recall["R@1"]),
          r3(overall.recall["R@5"]),
          r3(overall.recall["R@10"]),
          ms1(latencies.p50),
          ms1(latencies.p99),
          "",
          "",
          fmtModes(modes),
        ],
      ],
    ),
  );
  const indexLine = (r: ConversationResult) => {
    const items = r.index.items;
    const fts = items?.indices.map((i) => `${i.name} ${i.indexed}/${i.unindexed}`).join(", ") ?? "none";
    const vectors = r.index.vectors
      ? `; ${r.index.vectorTable} ${r.index.vectors.rows} rows, ${r.index.vectors.fragments} fragments`
      : "";
    return `  ${r.name}: items ${items?.rows ?? 0} rows (this user's partition), ${items?.fragments ?? 0} fragments; FTS indexed/unindexed rows: ${fts}${vectors}`;
  };
  console.log("\nIndex while the questions ran (after drain):");
  for (const r of results) console.log(indexLine(r));
  console.log(
    `\nRecall per category and signal set (R@1 / R@5 / R@10; "all" sends no signals field; a server that ignores signals gives equal columns):`,
  );
  const ablations = ablationTable(results);
  console.log(table(["category", "questions", ...ablations.names], ablations.rows));
  for (const name of ablations.names) {
    const modesOf: Record<string, number> = {};
    for (const r of results)
      for (const [k, v] of Object.entries(r.perSet.get(name)!.modes)) modesOf[k] = (modesOf[k] ?? 0) + v;
    console.log(`  ${name}: ${fmtModes(modesOf)}`);
  }
  console.log(
    `\nR@5 by category (overall): ${Object.entries(overall.byCategory)
      .map(([c, v]) => `${c} ${CATEGORY[c]} ${v.r5.toFixed(3)} (${v.questions} q)`)
      .join("; ")}`,
  );
  console.log("overall = mean over all questions of all conversations (not a mean of conversation means)");

  const notes = conversations.map((c) => c.evidenceNotes);
  const rewritten = notes.flatMap((n) => n.rewritten);
  const dropped = notes.flatMap((n) => n.dropped);
  const noEvidence = notes.flatMap((n) => n.noEvidence);
  console.log(
    `evidence ids: split on ';' and ',', whitespace removed, leading zeros dropped, 'Dn:m:k' read as 'Dn:m'; ids naming no turn dropped. ` +
      `Rewritten: ${rewritten.length ? rewritten.map((e) => JSON.stringify(e)).join(", ") : "none"}; dropped: ${dropped.length ? dropped.map((e) => JSON.stringify(e)).join(", ") : "none"}; ` +
      `questions left out for having no evidence: ${noEvidence.length}${noEvidence.length ? ` (${noEvidence.map((q) => JSON.stringify(q)).join(", ")})` : ""}; category 5 left out: ${notes.reduce((s, n) => s + n.adversarialSkipped, 0)}.`,
  );
  const ran = Object.keys(modes).join(", ");
  // The target depends on what actually ran: a missing model falls back to full text.
  const semantic = Object.keys(modes).some((m) => m.startsWith("semantic"));
  const [target, goal] = semantic
    ? ["with vectors (local MiniLM) target R@5 ≥ 0.75", 0.75]
    : ["full-text only target R@5 ≥ 0.62", 0.62];
  const fellBack =
    provider !== "none" && !semantic ? ` (provider ${provider} was asked for but no vectors took part)` : "";
  console.log(
    `mode that ran: ${ran}${fellBack}; ${target}: ${overall.recall["R@5"].toFixed(3)} ${overall.recall["R@5"] >= goal ? "ok" : "MISSED"}`,
  );
  console.log(
    "RECALL_JSON " +
      JSON.stringify({
        machine: machine(),
        server: server.where.startsWith("child") ? "child-process" : "in-process",
        provider,
        compactBeforeSearch: args["compact-before-search"],
        withSessionId: !args["without-session-id"],
        withTimestamp: !args["without-timestamp"],
        ablations: ablations.json,
        modes,
        overall: {
          ...overall.recall,
          p50: latencies.p50,
          p99: latencies.p99,
          questions: all.length,
          byCategory: overall.byCategory,
        },
        conversations: results.map(({ perQuestion: _q, perSet: _s, latencies: _l, ...r }) => r),
        evidence: { rewritten, dropped, noEvidence: noEvidence.length },
        data,
        baseline: { name: BASELINE, ...recallOf(perSetFigures.get(BASELINE)!) },
        // Each question's R@5 (and R@1, and category) in order, for paired comparisons of two runs (sign test, bootstrap).
        r5: all.map((q) => q.hits[1]),
        r1: all.map((q) => q.hits[0]),
        categories: all.map((q) => q.category),
      }),
  );
  return { data, perSet: perSetFigures };
}

/** Rows per category (and overall), a column per signal set with R@1 / R@5 / R@10; and the same as JSON. */
function ablationTable(results: ConversationResult[]) {
  const names = [...signalSets.keys()];
  const json: Record<string, Record<string, Record<string, number>>> = {};
  const rows: (string | number)[][] = [];
  const groups: [string, (q: { category: number }) => boolean][] = [
    ...[1, 2, 3, 4].map((c): [string, (q: { category: number }) => boolean] => [
      `${c} ${CATEGORY[c]}`,
      (q) => q.category === c,
    ]),
    ["overall", () => true],
  ];
  for (const [label, keep] of groups) {
    const row: (string | number)[] = [label, 0];
    for (const name of names) {
      const qs = results.flatMap((r) => r.perSet.get(name)!.perQuestion).filter(keep);
      row[1] = qs.length;
      const recall = recallOf(qs);
      json[name] ??= {};
      json[name][label] = recall;
      row.push(KS.map((k) => recall[`R@${k}`].toFixed(3)).join(" / "));
    }
    if (Number(row[1]) > 0) rows.push(row);
  }
  return { names, rows, json };
}

const CATEGORY: Record<string, string> = { 1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop" };

try {
  await main();
} catch (error) {
  console.error(`bench:recall failed: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  cleanup();
}
