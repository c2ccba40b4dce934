/**
 * The crash loop (docs/reliability.md#crash-loop), shared by crash.test.ts (one server) and
 * crash-replicas.test.ts (two replicas on one PostgreSQL database and one index dir).
 * Server processes under 8 concurrent writers (memory creates and deletes, document
 * creates, updates and deletes, chat appends, file uploads, metered completions) are
 * killed with SIGKILL at random moments and restarted on the same data. After every
 * restart: every acknowledged write is there, nothing deleted came back, nothing
 * appeared that no one wrote, each thread's messageCount equals its messages, usage
 * counters equal the completions acknowledged. At the end: the index caught up (a
 * sample of records is findable by a word only they hold, deleted and overwritten text
 * is not), and LanceDB holds no duplicate rows and no row of a deleted record.
 */
import { expect } from "bun:test";
import { join } from "node:path";
import { databaseEnvFor } from "../../helpers/database";
import { FIXED_USAGE, startFakeUpstream } from "../../helpers/fake-upstream";
import { duplicates, indexRows } from "../../helpers/index-rows";
import { Ledger } from "./ledger";
import { figure } from "./mode";
import { loadOperations } from "./openapi";
import { childEnv, startChild, type ChildServer } from "./server-process";

const USER = "crash-user";
const headers = { authorization: `Bearer mock-token-${USER}`, "content-type": "application/json" };

/** A small seeded generator, so a failing run's kill moments can be replayed with MNEMO_FUZZ_SEED. */
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s = (s * 1_103_515_245 + 12_345) >>> 0;
    return s / 2 ** 32;
  };
}

/** One crash loop's state (ledger, writers, checks); `seed` makes its randomness replayable. */
export function createCrashLoop(seed: number) {
  const random = rng(seed);
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  const SEED = seed;

  /** The replicas' URLs; requests go round-robin (one URL for a single server). */
  const bases: string[] = [];
  let turn = 0;
  const api = (method: string, path: string, body?: unknown) =>
    fetch(bases[turn++ % bases.length] + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  async function json(method: string, path: string, body?: unknown): Promise<[number, any, Headers]> {
    const response = await api(method, path, body);
    return [response.status, await response.json().catch(() => null), response.headers];
  }

  /** Every page of a bare-array list (next page in X-Next-Cursor) or an object list. */
  async function listAll(path: string, key?: string): Promise<any[]> {
    const out: any[] = [];
    let cursor: string | null = null;
    do {
      const sep = path.includes("?") ? "&" : "?";
      const [status, body, h] = await json(
        "GET",
        `${path}${sep}limit=${key === "data" ? 1000 : 200}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      if (status !== 200) throw new Error(`GET ${path} answered ${status}: ${JSON.stringify(body).slice(0, 200)}`);
      if (key) {
        out.push(...body[key]);
        cursor = body.nextCursor ?? null;
      } else {
        out.push(...body);
        cursor = h.get("x-next-cursor");
      }
    } while (cursor);
    return out;
  }

  const ledger = new Ledger();
  /** Uploaded files by key (the upload's own ledger: bytes acknowledged or not). */
  const files = new Map<string, { workspaceId: string; text: string; state: "uncertain" | "acked" }>();
  /** Completions answered (each metered by the upstream's usage: FIXED_USAGE tokens). */
  const completions = { acked: 0, uncertain: 0 };
  let stopping = false;
  let counter = 0;
  // Each token is its own term: the trailing digit keeps the stemmer off it. Without it
  // "verum94jinae" and a later "verum94jinas" share the stem "verum94jina", and a document
  // holding the second is rightly found by the first.
  const word = (kind: string) => `${kind}${SEED.toString(36)}n${(counter++).toString(36)}0`;

  /** One writer: loops until `stopping`, each step one write of its kind. */
  async function writer(kind: string, index: number, workspaces: string[], threads: string[]): Promise<void> {
    while (!stopping) {
      if (kind === "memory" || kind === "memory-ws") {
        const token = word("mem");
        const id = `cm-${token}`;
        const content = `crash memory ${token}`;
        const body =
          kind === "memory-ws"
            ? { id, content, workspaceId: pick(workspaces), session_id: `s${index}` }
            : { id, content };
        ledger.memories.set(id, { content, token, created: "uncertain" });
        await ledger.write(
          () => api("POST", "/v1/memories", body),
          () => (ledger.memories.get(id)!.created = "acked"),
          () => {},
        );
      } else if (kind === "delete") {
        const candidates = [...ledger.memories].filter(([, m]) => m.created === "acked" && !m.deleted);
        if (candidates.length === 0) {
          await Bun.sleep(5);
          continue;
        }
        const [id, entry] = pick(candidates);
        entry.deleted = "uncertain";
        await ledger.write(
          () => api("DELETE", `/v1/memories/${id}`),
          () => (entry.deleted = "acked"),
          () => {},
          [404],
        );
      } else if (kind === "document") {
        const mine = [...ledger.documents].filter(
          ([id, d]) => id.startsWith(`cd${index}-`) && d.created === "acked" && !d.deleted,
        );
        const roll = random();
        if (mine.length === 0 || roll < 0.4) {
          const token = word("ver");
          const id = `cd${index}-${word("doc")}`;
          const workspaceId = pick(workspaces);
          ledger.documents.set(id, { workspaceId, created: "uncertain", versions: [{ token, state: "uncertain" }] });
          const entry = ledger.documents.get(id)!;
          await ledger.write(
            () =>
              api("POST", "/v1/documents", {
                workspace_id: workspaceId,
                id,
                title: `doc ${id}`,
                markdown: `# ${id}\n\nversion ${token}`,
              }),
            () => {
              entry.created = "acked";
              entry.versions[0].state = "acked";
            },
            () => {},
          );
        } else if (roll < 0.85) {
          const [id, entry] = pick(mine);
          const token = word("ver");
          const version = { token, state: "uncertain" as const };
          entry.versions.push(version);
          await ledger.write(
            () =>
              api("PATCH", `/v1/documents/${id}`, {
                workspace_id: entry.workspaceId,
                markdown: `# ${id}\n\nversion ${token}`,
              }),
            () => ((version as { state: string }).state = "acked"),
            () => {},
          );
        } else {
          const [id, entry] = pick(mine);
          entry.deleted = "uncertain";
          await ledger.write(
            () => api("DELETE", `/v1/documents/${id}?workspace_id=${entry.workspaceId}`),
            () => (entry.deleted = "acked"),
            () => {},
            [404],
          );
        }
      } else if (kind === "file") {
        const workspaceId = pick(workspaces);
        const text = `file ${word("file")}\n`;
        const [status, upload] = await json("POST", `/v1/workspaces/${workspaceId}/files/upload-url`, {
          filename: "crash.md",
          contentType: "text/markdown",
        }).catch(() => [0, null, new Headers()] as [number, any, Headers]);
        if (status !== 200) {
          if (status !== 0 && status !== 503)
            throw new Error(`upload-url answered ${status}: ${JSON.stringify(upload)}`);
          continue;
        }
        const entry = { workspaceId, text, state: "uncertain" as "uncertain" | "acked" };
        files.set(upload.key, entry);
        await ledger.write(
          () => fetch(upload.url, { method: "PUT", headers: { "content-type": "text/markdown" }, body: text }),
          () => (entry.state = "acked"),
          () => {},
        );
      } else if (kind === "completion") {
        completions.uncertain++;
        await ledger.write(
          () =>
            api("POST", "/v1/chat/completions", {
              model: "fake",
              messages: [{ role: "user", content: `crash ${word("ask")}` }],
            }),
          () => {
            completions.acked++;
            completions.uncertain--;
          },
          () => {},
        );
      } else if (kind === "chat") {
        const threadId = threads[index % threads.length];
        const thread = ledger.threads.get(threadId)!;
        thread.uncertain++;
        await ledger.write(
          () =>
            api("POST", `/v1/workspaces/${thread.workspaceId}/chats/${threadId}/messages`, {
              role: random() < 0.5 ? "user" : "assistant",
              content: `chat ${word("msg")}`,
            }),
          (body) => {
            thread.acked.add(body.id);
            thread.uncertain--;
          },
          () => {},
        );
      }
    }
  }

  /** Compares the server with the ledger and settles uncertain entries to what it shows. */
  async function verify(round: number): Promise<string[]> {
    const problems: string[] = [];
    const memories = new Map((await listAll("/v1/memories", "data")).map((m) => [m.id, m]));
    for (const [id, entry] of ledger.memories) {
      const present = memories.get(id);
      if (present && present.content !== entry.content)
        problems.push(`memory ${id}: content ${JSON.stringify(present.content)}`);
      if (entry.deleted === "acked") {
        if (present) problems.push(`memory ${id}: deleted (acknowledged) but back after kill ${round}`);
      } else if (entry.created === "acked" && !entry.deleted) {
        if (!present) problems.push(`memory ${id}: acknowledged but missing after kill ${round}`);
      } else {
        // uncertain create or delete: settle to what the server holds
        if (present) {
          entry.created = "acked";
          entry.deleted = undefined;
        } else if (entry.created === "acked") entry.deleted = "acked";
        else ledger.memories.delete(id);
      }
      memories.delete(id);
    }
    for (const id of memories.keys()) problems.push(`memory ${id}: present but never written`);

    const workspaces = new Set([...ledger.documents.values()].map((d) => d.workspaceId));
    const stored = new Map<string, any>();
    for (const ws of workspaces)
      for (const d of await listAll(`/v1/workspaces/${ws}/documents`, "documents")) stored.set(d.id, d);
    for (const [id, entry] of ledger.documents) {
      const present = stored.get(id);
      if (entry.deleted === "acked" && present)
        problems.push(`document ${id}: deleted (acknowledged) but back after kill ${round}`);
      else if (entry.created === "acked" && !entry.deleted && !present)
        problems.push(`document ${id}: acknowledged but missing after kill ${round}`);
      else if (!present) {
        if (entry.created === "acked") entry.deleted = "acked";
        else ledger.documents.delete(id);
        continue;
      } else {
        entry.created = "acked";
        entry.deleted = undefined;
      }
      if (!present) continue;
      const [, full] = await json("GET", `/v1/workspaces/${entry.workspaceId}/documents/${id}`);
      const holds = /version (\S+)/.exec(full?.document?.markdown ?? "")?.[1];
      const lastAcked = entry.versions.map((v) => v.state).lastIndexOf("acked");
      const at = entry.versions.findIndex((v) => v.token === holds);
      if (at < 0 || at < lastAcked)
        problems.push(`document ${id}: holds version ${holds}, last acknowledged ${entry.versions[lastAcked]?.token}`);
      else entry.versions = entry.versions.slice(0, at + 1).map((v) => ({ ...v, state: "acked" }));
      stored.delete(id);
    }
    for (const id of stored.keys()) problems.push(`document ${id}: present but never written`);

    if (files.size) {
      const stored = new Map<string, any>();
      for (const ws of new Set([...files.values()].map((f) => f.workspaceId)))
        for (const f of await listAll(`/v1/workspaces/${ws}/files`, "files")) stored.set(f.key, f);
      for (const [key, entry] of files) {
        const present = stored.get(key);
        if (entry.state === "acked" && !present)
          problems.push(`file ${key}: acknowledged but missing after kill ${round}`);
        if (present && present.size !== Buffer.byteLength(entry.text))
          problems.push(`file ${key}: ${present.size} bytes, ${Buffer.byteLength(entry.text)} uploaded`);
        if (present) entry.state = "acked";
        else if (entry.state !== "acked") files.delete(key);
      }
    }
    if (completions.acked + completions.uncertain > 0) {
      const [, usage] = await json("GET", "/v1/usage");
      const count = usage?.usage?.requestCount ?? -1;
      if (count < completions.acked || count > completions.acked + completions.uncertain) {
        problems.push(
          `usage: requestCount ${count}, ${completions.acked} completions acknowledged (+${completions.uncertain} in flight at the kill)`,
        );
      } else if (usage.usage.totalTokens !== count * FIXED_USAGE.total_tokens) {
        problems.push(
          `usage: totalTokens ${usage.usage.totalTokens} for ${count} completions of ${FIXED_USAGE.total_tokens} tokens`,
        );
      }
      completions.acked = Math.max(count, completions.acked);
      completions.uncertain = 0;
    }
    for (const [threadId, thread] of ledger.threads) {
      const messages = await listAll(`/v1/workspaces/${thread.workspaceId}/chats/${threadId}/messages`);
      const ids = new Set(messages.map((m) => m.id));
      for (const id of thread.acked)
        if (!ids.has(id)) problems.push(`message ${id}: acknowledged but missing after kill ${round}`);
      if (messages.length > thread.acked.size + thread.uncertain)
        problems.push(
          `thread ${threadId}: ${messages.length} messages, at most ${thread.acked.size + thread.uncertain} written`,
        );
      const listed = (await listAll(`/v1/workspaces/${thread.workspaceId}/chats`)).find((t) => t.id === threadId);
      if (listed?.messageCount !== messages.length)
        problems.push(`thread ${threadId}: messageCount ${listed?.messageCount}, ${messages.length} messages stored`);
      thread.acked = ids;
      thread.uncertain = 0;
    }
    return problems;
  }

  /** Polls a search until `ok` holds (the index catches up), or returns the last answer. */
  async function eventually(query: () => Promise<unknown>, ok: (answer: any) => boolean, ms = 30_000): Promise<any> {
    const until = Date.now() + ms;
    let answer: any;
    while (Date.now() < until) {
      answer = await query();
      if (ok(answer)) return answer;
      await Bun.sleep(200);
    }
    return answer;
  }

  /**
   * Runs the loop: `kills` SIGKILLs; with `replicas` 2 (PostgreSQL only) two servers share
   * the database and an index dir, and the victim alternates between the index writer
   * and either replica.
   */
  async function run({
    dataDir,
    kills,
    replicas = 1,
  }: {
    dataDir: string;
    kills: number;
    replicas?: number;
  }): Promise<void> {
    const replicaDirs = Array.from({ length: replicas }, (_, i) =>
      replicas > 1 ? join(dataDir, `replica-${i}`) : dataDir,
    );
    // Replicas share one index dir (MNEMO_INDEX_URI); indexRows reads `<dir>/index`.
    const indexParent = dataDir;
    const shared: Record<string, string> = replicas > 1 ? { MNEMO_INDEX_URI: join(dataDir, "index") } : {};

    const upstream = startFakeUpstream({ record: false });
    const env = childEnv(dataDir, {
      ...(await databaseEnvFor(dataDir)),
      ...shared,
      LLM_GATEWAY_URL: upstream.url,
      MNEMO_RATE_LIMIT_KEY_PER_MINUTE: "1000000",
      MNEMO_RATE_LIMIT_PRINCIPAL_PER_HOUR: "1000000",
      MONTHLY_TOKEN_LIMIT: "1000000000",
    });
    // One after the other: the first runs the migrations and takes the index writer lease.
    const servers: ChildServer[] = [];
    for (let i = 0; i < replicas; i++) servers.push(await startChild(replicaDirs[i], env));
    bases.push(...servers.map((s) => s.url));
    const workspaces: string[] = [];
    for (const name of ["crash one", "crash two"])
      workspaces.push((await json("POST", "/v1/workspaces", { name }))[1].id);
    const threads: string[] = [];
    for (const ws of workspaces) {
      const [, thread] = await json("POST", `/v1/workspaces/${ws}/chats`, { title: "crash" });
      threads.push(thread.id);
      ledger.threads.set(thread.id, { workspaceId: ws, acked: new Set(), uncertain: 0 });
    }
    // Uploads and metered completions join once their routes exist (they replace a second
    // memory and a second chat writer: 8 writers in all).
    const routes = new Set((await loadOperations(bases[0])).filter((op) => !op.pending).map((op) => op.key));
    const hasFiles = routes.has("POST /v1/workspaces/:workspaceId/files/upload-url");
    const hasCompletions = routes.has("POST /v1/chat/completions") && routes.has("GET /v1/usage");
    const kinds = [
      "memory",
      hasCompletions ? "completion" : "memory",
      "memory-ws",
      "delete",
      "document",
      "document",
      "chat",
      hasFiles ? "file" : "chat",
    ];
    const allProblems: string[] = [];
    const restartMs: number[] = [];
    const victims: string[] = [];
    for (let round = 1; round <= kills; round++) {
      stopping = false;
      const writers = kinds.map((kind, i) => writer(kind, i, workspaces, threads));
      await Bun.sleep(150 + Math.floor(random() * 1_200));
      // With replicas: every other round the index writer (per /health), else either one.
      let victim = 0;
      if (replicas > 1) {
        const writerAt = await Promise.all(
          servers.map((s) =>
            fetch(`${s.url}/health`, { headers })
              .then((r) => r.json())
              .then(
                (h: any) => h.index?.writer === true,
                () => false,
              ),
          ),
        );
        victim = round % 2 === 0 && writerAt.includes(true) ? writerAt.indexOf(true) : Math.floor(random() * replicas);
        victims.push(writerAt[victim] ? "writer" : "reader");
      }
      await servers[victim].kill("SIGKILL");
      stopping = true;
      await Promise.all(writers);
      const started = performance.now();
      servers[victim] = await startChild(replicaDirs[victim], env);
      restartMs.push(performance.now() - started);
      bases[victim] = servers[victim].url;
      const problems = await verify(round);
      allProblems.push(...problems);
      if (problems.length) break;
    }
    upstream.stop();
    expect(allProblems).toEqual([]);

    // The index caught up: a sample of live records is findable by its own word, and
    // deleted memories and overwritten document versions are not.
    const live = [...ledger.memories].filter(([, m]) => m.created === "acked" && !m.deleted);
    const dead = [...ledger.memories].filter(([, m]) => m.deleted === "acked");
    const sample = <T>(list: T[], n: number) =>
      list
        .slice()
        .sort(() => random() - 0.5)
        .slice(0, n);
    const searchProblems: string[] = [];
    for (const [id, m] of sample(live, 25)) {
      const found = await eventually(
        () => json("POST", "/v1/memories/search", { query: m.token, limit: 5 }),
        ([, b]) => b?.results?.some((r: any) => r.id === id),
      );
      if (!found?.[1]?.results?.some((r: any) => r.id === id))
        searchProblems.push(`memory ${id} not findable by ${m.token}`);
    }
    for (const [id, m] of sample(dead, 25)) {
      const [, b] = await json("POST", "/v1/memories/search", { query: m.token, limit: 5 });
      if (b?.results?.some((r: any) => r.id === id))
        searchProblems.push(`deleted memory ${id} still found by ${m.token}`);
    }
    const docs = [...ledger.documents].filter(([, d]) => d.created === "acked" && !d.deleted);
    for (const [id, d] of sample(docs, 15)) {
      const current = d.versions[d.versions.length - 1].token;
      const found = await eventually(
        () => json("POST", "/v1/documents/query", { query: current, workspace_id: d.workspaceId, top_k: 5 }),
        ([, b]) => b?.items?.some((i: any) => i.documentId === id),
      );
      if (!found?.[1]?.items?.some((i: any) => i.documentId === id))
        searchProblems.push(`document ${id} not findable by its current version ${current}`);
      for (const old of d.versions.slice(0, -1).slice(-2)) {
        const [, b] = await json("POST", "/v1/documents/query", {
          query: old.token,
          workspace_id: d.workspaceId,
          top_k: 5,
        });
        if (b?.items?.some((i: any) => i.documentId === id))
          searchProblems.push(`document ${id} still found by overwritten version ${old.token} (holds ${current})`);
      }
    }
    expect(searchProblems).toEqual([]);

    // Wait for the outbox to drain, stop cleanly, then read LanceDB as a second process would.
    for (const ws of workspaces) {
      await eventually(
        () => json("GET", `/v1/workspaces/${ws}/index/status`),
        ([, s]) => s?.pending?.text === 0,
      );
    }
    for (const s of servers) await s.kill("SIGTERM");
    const rows = await indexRows(indexParent);
    const dupes = duplicates(rows);
    // source_key is `kind|ownerLength|owner|sourceId` (src/search/types.ts).
    const deadIds = new Set([
      ...dead.map(([id]) => id),
      ...[...ledger.documents].filter(([, d]) => d.deleted === "acked").map(([id]) => id),
    ]);
    const staleRows = rows.filter((r) => deadIds.has(r.item_id) || deadIds.has(r.source_key.split("|").pop() ?? ""));
    const liveIds = new Set(live.map(([id]) => id));
    const memoryRows = rows.filter((r) => r.source_key.startsWith("memory|")).map((r) => r.source_key.split("|").pop());
    expect(new Set(memoryRows.filter((id) => liveIds.has(id!))).size).toBe(liveIds.size);
    expect({ duplicates: dupes.slice(0, 10), stale: staleRows.slice(0, 10) }).toEqual({ duplicates: [], stale: [] });

    const messages = [...ledger.threads.values()].reduce((n, t) => n + t.acked.size, 0);
    restartMs.sort((a, b) => a - b);
    figure(
      "crash",
      `${replicas > 1 ? `2 replicas, ${victims.filter((v) => v === "writer").length} kills of the index writer, ` : ""}${kills} SIGKILLs, ${ledger.acked} acknowledged writes (${live.length} live memories, ${dead.length} deleted, ${docs.length} documents, ${messages} chat messages, ${files.size} files, ${completions.acked} metered completions), ` +
        `0 lost; restart to listening median ${Math.round(restartMs[Math.floor(restartMs.length / 2)])} ms, max ${Math.round(restartMs[restartMs.length - 1])} ms; ${rows.length} index rows, 0 duplicates`,
    );
  }

  return { run };
}
