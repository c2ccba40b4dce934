import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../config";
import { MASTER_KEY_FILE, parseMasterKey } from "../crypto/master-key";
import { dataPaths } from "../data-paths";
import { openStoreFor } from "../db/open";
import { countEscrowedKeys } from "../crypto/escrow";
import { integrityProblems } from "../db/integrity";
import { appliedMigrationCount } from "../db/migrate";
import type { Store } from "../db/store";
import { extractionJobHealth } from "../formation/job-health";
import { findNearDuplicates } from "../memories/near-duplicates";
import { plural, type Check } from "./doctor-check";
import { dataDirCheck, diskCheck, permissionsCheck } from "./doctor-disk-checks";
import { indexChecks } from "./doctor-index-checks";
import { gatewayCheck, modelCheck } from "./doctor-upstream-checks";

export type { Check, CheckStatus } from "./doctor-check";
export { permissionsCheck } from "./doctor-disk-checks";

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
