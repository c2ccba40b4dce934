import { existsSync } from "node:fs";
import { access, constants, readFile, statfs } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../config";
import { MASTER_KEY_FILE, parseMasterKey } from "../crypto/master-key";
import { dataPaths } from "../data-paths";
import { openStoreFor } from "../db/open";
import { countEscrowedKeys } from "../crypto/escrow";
import { integrityProblems } from "../db/integrity";
import { createSettings, liveLeaseHolder } from "../db/leases";
import { appliedMigrationCount } from "../db/migrate";
import type { Store } from "../db/store";
import { exposedEntries } from "../lib/owner-only";
import { extractionJobHealth } from "../formation/job-health";
import { findNearDuplicates } from "../memories/near-duplicates";
import { INDEX_SCHEMA_VERSION, indexStatus, outboxBacklog, recordedIndexFailure } from "../search";

/** `ok` green, `warn` yellow (reported, does not fail), `fail` red (exit code 1), `skip` when a check it needs failed. */
export type CheckStatus = "ok" | "warn" | "fail" | "skip";

export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
  /** What to do about a warn or fail. */
  hint?: string;
  /** Details for `--json` (the near-duplicate groups). */
  items?: unknown[];
}

const MIN_FREE_BYTES = 1024 ** 3;
const STALE_OUTBOX_MS = 10 * 60_000;
const PROBE_TIMEOUT_MS = 3_000;
const gb = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GB`;
/** `1 change`, `3 changes`. */
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

async function probe(url: string, headers: Record<string, string> = {}): Promise<string | null> {
  try {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    await response.body?.cancel();
    return null;
  } catch (error) {
    return (error as Error).name === "TimeoutError"
      ? `no answer within ${PROBE_TIMEOUT_MS / 1000}s`
      : (error as Error).message;
  }
}

async function dataDirCheck(config: Config): Promise<Check> {
  if (!existsSync(config.dataDir)) {
    return {
      name: "data dir",
      status: "fail",
      detail: `${config.dataDir} does not exist`,
      hint: "check --data / MNEMO_DATA_DIR, or run `mnemo serve` once to create it",
    };
  }
  try {
    await access(config.dataDir, constants.W_OK);
    return { name: "data dir", status: "ok", detail: config.dataDir };
  } catch {
    return {
      name: "data dir",
      status: "fail",
      detail: `${config.dataDir} is not writable by this user`,
      hint: "fix its owner or permissions",
    };
  }
}

/**
 * Whether other users can read or change the data dir: it holds memories, notes, file
 * text, key hashes, the master key and the presign and cursor secrets. Mnemo creates
 * everything owner-only; a data dir made by an earlier version, or copied, may not be.
 * `mnemo doctor` reports it, and `mnemo serve` warns with it when it starts on such a dir.
 */
export async function permissionsCheck(config: Pick<Config, "dataDir">): Promise<Check> {
  const name = "data dir permissions";
  const { exposed, complete } = await exposedEntries(config.dataDir);
  const scope = complete ? "" : " (the first 50,000 entries looked at)";
  if (!exposed.length) return { name, status: "ok", detail: `owner-only${scope}` };
  const shown = exposed
    .slice(0, 3)
    .map((entry) => `${entry.path} (${entry.mode.toString(8).padStart(4, "0")})`)
    .join(", ");
  const more = exposed.length > 3 ? ` and ${exposed.length - 3} more` : "";
  return {
    name,
    status: "warn",
    detail: `readable or writable by other users: ${shown}${more}${scope}`,
    hint: `chmod -R go-rwx '${config.dataDir}'`,
  };
}

async function diskCheck(config: Config): Promise<Check> {
  try {
    const fs = await statfs(config.dataDir);
    const free = Number(fs.bavail) * Number(fs.bsize);
    return free < MIN_FREE_BYTES
      ? {
          name: "free disk",
          status: "fail",
          detail: `${gb(free)} free`,
          hint: `free space on the disk of ${config.dataDir}; writes fail when it is full`,
        }
      : { name: "free disk", status: "ok", detail: `${gb(free)} free` };
  } catch (error) {
    return { name: "free disk", status: "warn", detail: `unknown (${(error as Error).message})` };
  }
}

async function integrityCheck(store: Store, knownMigrations: number): Promise<Check> {
  const name = "store of record";
  try {
    const problems = await integrityProblems(store);
    if (problems.length) {
      return {
        name,
        status: "fail",
        detail: `integrity check: ${problems.slice(0, 3).join("; ")}`,
        hint: "restore the latest backup (`mnemo restore`)",
      };
    }
    const pending = knownMigrations - (await appliedMigrationCount(store));
    const schema = pending > 0 ? `, ${pending} migrations pending (applied at the next start)` : "";
    return {
      name,
      status: "ok",
      detail: `${store.location} (${store.dialect === "sqlite" ? "integrity ok" : "answers"}${schema})`,
    };
  } catch (error) {
    return {
      name,
      status: "fail",
      detail: `${store.location}: ${(error as Error).message}`,
      hint: "check MNEMO_DATABASE_URL and that the database server runs",
    };
  }
}

async function indexChecks(store: Store): Promise<Check[]> {
  const holder = await liveLeaseHolder(store, "indexer");
  const live = holder !== null;
  const { text, vector, oldest, oldestText } = await outboxBacklog(store);
  const ageMs = oldest ? Date.now() - oldest : 0;
  const textAgeMs = oldestText ? Date.now() - oldestText : 0;
  const lag: Check = {
    name: "index lag",
    status: "ok",
    detail: `${plural(text, "change")} waiting for full-text, ${vector} for vectors`,
  };
  if (text + vector > 0) lag.detail += `; oldest ${Math.round(ageMs / 1000)}s`;
  // The same verdict as the writer's `/health`: a failure it recorded, or changes waiting too long.
  const { status, failure } = indexStatus({
    own: null,
    recorded: await recordedIndexFailure(createSettings(), store.db),
    writerId: holder,
    pendingText: text,
    oldestPendingAgeMs: textAgeMs,
  });
  if (failure) {
    Object.assign(lag, {
      status: "fail",
      detail: `${lag.detail}; index writes fail since ${failure.since}: ${failure.reason}`,
      hint: "the writer cannot write the search index (MNEMO_INDEX_URI: permissions, free space, object store); records are kept and indexed once writes succeed",
    });
  } else if (live && status === "behind") {
    Object.assign(lag, { status: "warn", hint: "the index writer is behind; see its log" });
  } else if (!live && text > 0 && textAgeMs > STALE_OUTBOX_MS) {
    Object.assign(lag, {
      status: "fail",
      hint: "no process writes the index: start `mnemo serve` (it drains the queue), or run `mnemo reindex`",
    });
  }
  const writerCheck: Check = live
    ? { name: "index writer", status: "ok", detail: `${holder} (lease live)` }
    : store.dialect === "postgres"
      ? {
          name: "index writer",
          status: text > 0 ? "fail" : "warn",
          detail: "no replica holds the index writer lease",
          hint: "start at least one `mnemo serve` replica on this database",
        }
      : {
          name: "index writer",
          status: "ok",
          detail: "no server running on this data dir (one becomes the writer when it starts)",
        };
  return [lag, writerCheck, await layoutCheck(store)];
}

/**
 * Whether the index has this Mnemo's layout (analyzer, columns, term statistics). An index
 * of an older layout is rebuilt by the index writer when it starts; searches stay complete
 * meanwhile (every source is pending and read from the store), only slower.
 */
async function layoutCheck(store: Store): Promise<Check> {
  const layout = await createSettings().get(store.db, "index_schema");
  if (layout === INDEX_SCHEMA_VERSION) return { name: "index layout", status: "ok", detail: `version ${layout}` };
  return {
    name: "index layout",
    status: "warn",
    detail: layout ? `version ${layout}; this Mnemo writes version ${INDEX_SCHEMA_VERSION}` : "not built yet",
    hint: "the next `mnemo serve` rebuilds the index from the store of record (searches stay complete meanwhile); or run `mnemo reindex` now",
  };
}

/** The outage the index writer recorded (vectors cannot be made now): said here as `/health` says it. */
async function vectorsUnavailable(store: Store | null): Promise<Check | null> {
  if (!store) return null;
  const { readVectorOutage, vectorsStatus } = await import("../search");
  const status = vectorsStatus(true, await readVectorOutage(createSettings(), store.db).catch(() => null));
  if (status === "ok") return null;
  return {
    name: "embedding model",
    status: "fail",
    detail: `vectors ${status}`,
    hint: "changes wait for their vectors and get them once the model is there: `mnemo models pull`, or `mnemo models install --from DIR` without network",
  };
}

async function modelCheck(config: Config, store: Store | null = null): Promise<Check> {
  const name = "embedding model";
  const e = config.embeddings;
  if (e.provider === "none")
    return { name, status: "ok", detail: "embeddings off (EMBEDDINGS_PROVIDER=none): full-text search only" };
  const unavailable = await vectorsUnavailable(store);
  if (unavailable) return unavailable;
  if (e.provider === "openai") {
    const problem = await probe(
      `${e.url!.replace(/\/+$/, "")}/models`,
      e.apiKey ? { authorization: `Bearer ${e.apiKey}` } : {},
    );
    return problem
      ? {
          name,
          status: "fail",
          detail: `${e.url} unreachable: ${problem}`,
          hint: "check EMBEDDINGS_URL; writes queue vectors until it answers",
        }
      : { name, status: "ok", detail: `${e.model ?? "model"} at ${e.url}` };
  }
  const { checkModelFiles, getModelSpec } = await import("../search");
  const status = await checkModelFiles(e.modelsDir, getModelSpec(e.localModel, { pins: e.modelPins }));
  if (status.state === "present") return { name, status: "ok", detail: `${status.name} in ${status.path}` };
  const hint = `run \`mnemo models pull ${e.localModel}\`${e.autoDownload ? " (or let the server download it on first use)" : ""}`;
  return {
    name,
    status: e.autoDownload && status.state === "absent" ? "warn" : "fail",
    detail: `${status.name}: ${status.state}${status.problem ? ` (${status.problem})` : ""}`,
    hint,
  };
}

async function gatewayCheck(config: Config): Promise<Check | null> {
  // The completions config arrives with the completions feature; read it defensively.
  const completions = (config as unknown as { completions?: { gatewayUrl?: string; gatewayApiKey?: string } })
    .completions;
  if (!completions?.gatewayUrl) return null;
  const problem = await probe(
    `${completions.gatewayUrl}/models`,
    completions.gatewayApiKey ? { authorization: `Bearer ${completions.gatewayApiKey}` } : {},
  );
  if (!problem) return { name: "upstream gateway", status: "ok", detail: `${completions.gatewayUrl} answers` };
  // The default (a local Ollama) is only a guess: its absence is a warning, a configured gateway's a failure.
  const isDefault = completions.gatewayUrl === "http://127.0.0.1:11434/v1";
  return {
    name: "upstream gateway",
    status: isDefault ? "warn" : "fail",
    detail: `${completions.gatewayUrl} unreachable: ${problem}`,
    hint: isDefault
      ? "chat completions need an upstream: set LLM_GATEWAY_URL, or start Ollama"
      : "check LLM_GATEWAY_URL and that the gateway runs",
  };
}

async function masterKeyCheck(config: Config, store: Store | null): Promise<Check> {
  const name = "master key";
  const configured = (config as unknown as { encryption?: { masterKey?: string } }).encryption?.masterKey;
  if (configured) {
    try {
      parseMasterKey(configured, "SERVER_MASTER_KEY");
      return { name, status: "ok", detail: "SERVER_MASTER_KEY is set" };
    } catch (error) {
      return {
        name,
        status: "fail",
        detail: (error as Error).message,
        hint: "generate one with `openssl rand -hex 32`",
      };
    }
  }
  if (config.storage.databaseUrl) {
    return {
      name,
      status: "fail",
      detail: "SERVER_MASTER_KEY is not set (required with PostgreSQL)",
      hint: "set the same 32-byte key on every replica (`openssl rand -hex 32`)",
    };
  }
  const path = join(config.dataDir, MASTER_KEY_FILE);
  if (existsSync(path)) {
    try {
      parseMasterKey(await readFile(path, "utf8"), path);
      return { name, status: "ok", detail: path };
    } catch (error) {
      return { name, status: "fail", detail: (error as Error).message, hint: "restore master.key from a backup" };
    }
  }
  const escrowed = store ? await countEscrowedKeys(store.db).catch(() => 0) : 0;
  return escrowed > 0
    ? {
        name,
        status: "fail",
        detail: `${path} is missing and ${escrowed} client keys are escrowed under it`,
        hint: "restore master.key from a backup; without it those keys cannot be opened",
      }
    : { name, status: "ok", detail: `none yet (created at ${path} when the server first starts)` };
}

/**
 * Memories that say the same in other words (same user and workspace, the same words once
 * normalised, in any order, punctuation aside): reported, never changed. Their ids are in
 * `--json` only; no content is shown.
 */
async function nearDuplicatesCheck(store: Store): Promise<Check> {
  const name = "memory duplicates";
  const { groups, total, scanned } = await findNearDuplicates(store.db);
  if (!total) return { name, status: "ok", detail: `none among ${plural(scanned, "memory", "memories")}` };
  const users = new Set(groups.map((g) => g.ownerId)).size;
  return {
    name,
    status: "warn",
    detail: `${plural(total, "group")} of near-duplicate memories (${users}${groups.length < total ? "+" : ""} ${users === 1 && groups.length >= total ? "user" : "users"}) among ${scanned}`,
    hint: "kept as they are; `mnemo doctor --json` lists their ids per user and workspace",
    items: groups,
  };
}

/**
 * Memory extraction jobs of captured conversations: yellow from a job's first failed attempt
 * (retrying), not only once it failed for good, with the latest reason (our message, never
 * content). Owners see theirs in GET /v1/memories/extract/jobs and retry them there.
 */
async function extractionJobsCheck(store: Store): Promise<Check> {
  const name = "memory extraction";
  const { counts, latestError } = await extractionJobHealth(store.db);
  const retrying = counts.retrying ?? 0;
  const detail = `${plural((counts.pending ?? 0) - retrying, "job")} pending, ${counts.running ?? 0} running, ${retrying} retrying, ${counts.failed ?? 0} failed, ${counts.done ?? 0} done`;
  if (!counts.failed && !retrying) return { name, status: "ok", detail };
  const latest = await latestError();
  return {
    name,
    status: "warn",
    detail: latest ? `${detail}; latest error: ${latest}` : detail,
    hint: "check the memory model (MNEMO_MEMORY_MODEL) and the gateway; users see why and retry in GET /v1/memories/extract/jobs, `mnemo memories jobs` or the app",
  };
}

/**
 * Every check of `mnemo doctor`, in a fixed order. Opens the store of record itself
 * (never creating a missing SQLite file) and nothing heavy: no LanceDB, no model.
 * `knownMigrations`: how many migrations this Mnemo has (the list sits above the domains).
 */
export async function runChecks(config: Config, knownMigrations: number): Promise<Check[]> {
  const dataDir = await dataDirCheck(config);
  const checks: Check[] = [dataDir];
  if (existsSync(config.dataDir)) checks.push(await permissionsCheck(config));
  checks.push(await diskCheck(config));
  let store: Store | null = null;
  if (!config.storage.databaseUrl && !existsSync(dataPaths(config.dataDir).sqlite)) {
    checks.push({
      name: "store of record",
      status: "fail",
      detail: `no store at ${dataPaths(config.dataDir).sqlite}`,
      hint: "a wrong --data? `mnemo serve` creates it",
    });
  } else {
    // A store that cannot be opened (a damaged file) is the store check's failure; the other checks still run.
    let integrity: Check;
    try {
      store = openStoreFor({ ...config.storage, databasePoolSize: 1 }, config.dataDir);
      integrity = await integrityCheck(store, knownMigrations);
    } catch (error) {
      integrity = {
        name: "store of record",
        status: "fail",
        detail: (error as Error).message,
        hint: "restore the latest backup (`mnemo restore`), or fix the file's permissions",
      };
    }
    checks.push(integrity);
    if (integrity.status === "ok") {
      checks.push(
        ...(await indexChecks(store!).catch((error) => [
          { name: "index lag", status: "fail" as const, detail: (error as Error).message },
        ])),
      );
      // Tables a store not yet migrated lacks: those checks are skipped, not failed.
      const notYet = (name: string) => (): Check => ({
        name,
        status: "skip",
        detail: "skipped: the store's schema is older (the next `mnemo serve` migrates it)",
      });
      checks.push(await nearDuplicatesCheck(store!).catch(notYet("memory duplicates")));
      checks.push(await extractionJobsCheck(store!).catch(notYet("memory extraction")));
    } else
      checks.push(
        ...["index lag", "index writer", "index layout"].map(
          (name): Check => ({ name, status: "skip", detail: "skipped: the store of record cannot be read" }),
        ),
      );
  }
  try {
    checks.push(await modelCheck(config, store));
    const gateway = await gatewayCheck(config);
    if (gateway) checks.push(gateway);
    checks.push(await masterKeyCheck(config, store));
  } finally {
    await store?.close();
  }
  return checks;
}
