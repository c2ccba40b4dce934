import { cp, mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config";
import { MASTER_KEY_FILE } from "../crypto/master-key";
import { dataPaths } from "../data-paths";
import { snapshotSqlite } from "../db/sqlite-snapshot";
import { redactUrl } from "../db/store";
import { makeOwnerOnly, OWNER_ONLY_DIR, OWNER_ONLY_FILE } from "../lib/owner-only";

export const BACKUP_MANIFEST = "mnemo-backup.json";
const BACKUP_VERSION = 1;

export interface BackupManifest {
  format: "mnemo-backup";
  version: number;
  createdAt: string;
  store: "sqlite" | "postgres";
  /** The store snapshot inside the backup dir (SQLite), or null (PostgreSQL: pg_dump's file, made by the operator). */
  database: string | null;
  /** Whether `blobs/` (file bytes) was copied, and `master.key`. */
  blobs: boolean;
  masterKey: boolean;
}

export interface BackupResult {
  manifest: BackupManifest;
  dir: string;
  bytes: number;
  /** PostgreSQL: the commands to run, since the store of record is not in the data dir. */
  guidance: string[];
}

async function sizeOf(path: string): Promise<number> {
  const info = await stat(path);
  if (!info.isDirectory()) return info.size;
  let total = 0;
  for (const entry of await readdir(path)) total += await sizeOf(join(path, entry));
  return total;
}

async function isEmptyDir(dir: string): Promise<boolean> {
  return !existsSync(dir) || (await readdir(dir)).length === 0;
}

/** A local blobs directory (object storage is backed up by its own means). */
const localBlobs = (config: Config) => (config.files.blobsUri.includes("://") ? null : config.files.blobsUri);

/**
 * A consistent online snapshot of the data dir into `outDir` (which must be empty or
 * new). SQLite: `VACUUM INTO` copies the database as of one read transaction while a
 * server keeps writing (WAL), compacted. Then the blobs directory is copied: after the
 * snapshot, so every file the snapshot names has its bytes (blobs are immutable; one
 * written later is merely unused). `master.key` is copied too, without which escrowed
 * client keys cannot be opened. The search index is not copied: restore rebuilds it.
 * PostgreSQL: the store of record is the database, so this copies the blobs and the
 * key and returns the `pg_dump` command to run. Everything written is owner-only (0700
 * directories, 0600 files), whatever the modes of the data dir's files.
 */
export async function backup(config: Config, outDir: string): Promise<BackupResult> {
  if (!(await isEmptyDir(outDir)))
    throw new Error(`--out: ${outDir} is not empty; back up into a new or empty directory`);
  const createdDir = !existsSync(outDir);
  await mkdir(outDir, { recursive: true, mode: OWNER_ONLY_DIR });
  const postgres = Boolean(config.storage.databaseUrl);
  const guidance: string[] = [];
  let database: string | null = null;
  if (!postgres) {
    const source = dataPaths(config.dataDir).sqlite;
    if (!existsSync(source)) throw new Error(`no store of record at ${source}; nothing to back up`);
    database = "mnemo.sqlite";
    snapshotSqlite(source, join(outDir, database));
  } else {
    const url = redactUrl(config.storage.databaseUrl!);
    guidance.push(
      `(umask 077; pg_dump --format=custom --file ${join(outDir, "mnemo.pgdump")} '${url}')   # a consistent snapshot, owner-only; add the password via PGPASSWORD or ~/.pgpass`,
      `restore later with: pg_restore --clean --if-exists --no-owner --dbname '<new database url>' ${join(outDir, "mnemo.pgdump")}, then: mnemo reindex`,
    );
  }
  const blobsDir = localBlobs(config);
  const blobs = blobsDir !== null && existsSync(blobsDir);
  if (blobs) await cp(blobsDir!, join(outDir, "blobs"), { recursive: true });
  if (blobsDir === null)
    guidance.push(`file bytes live in ${config.files.blobsUri}: back that bucket up with its own tools`);
  const keyFile = join(config.dataDir, MASTER_KEY_FILE);
  const masterKey = !config.encryption?.masterKey && existsSync(keyFile);
  if (masterKey) await cp(keyFile, join(outDir, MASTER_KEY_FILE));
  if (config.encryption?.masterKey)
    guidance.push("SERVER_MASTER_KEY is set in the environment: keep it with this backup (it is not copied)");
  const manifest: BackupManifest = {
    format: "mnemo-backup",
    version: BACKUP_VERSION,
    createdAt: new Date().toISOString(),
    store: postgres ? "postgres" : "sqlite",
    database,
    blobs,
    masterKey,
  };
  await writeFile(join(outDir, BACKUP_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: OWNER_ONLY_FILE });
  // A backup holds everything the data dir does: owner-only, whatever the modes of what it copied.
  // A directory the operator made beforehand keeps its own mode; what is in it does not.
  if (createdDir) await makeOwnerOnly(outDir);
  else for (const entry of await readdir(outDir)) await makeOwnerOnly(join(outDir, entry));
  return { manifest, dir: outDir, bytes: await sizeOf(outDir), guidance };
}

export async function readManifest(dir: string): Promise<BackupManifest> {
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, BACKUP_MANIFEST), "utf8"));
  } catch {
    throw new Error(`${dir}: not a Mnemo backup (no readable ${BACKUP_MANIFEST})`);
  }
  if (manifest.format !== "mnemo-backup") throw new Error(`${dir}: not a Mnemo backup`);
  if (manifest.version > BACKUP_VERSION)
    throw new Error(`${dir}: a backup of format version ${manifest.version}, newer than this Mnemo reads`);
  return manifest;
}

/**
 * Puts a backup's files into the data dir of `config`, which must hold no store of
 * record yet (restore never overwrites data). The caller rebuilds the search index.
 */
export async function restoreFiles(config: Config, dir: string, manifest: BackupManifest): Promise<string[]> {
  const guidance: string[] = [];
  const target = dataPaths(config.dataDir).sqlite;
  if (manifest.store === "sqlite") {
    if (config.storage.databaseUrl) {
      throw new Error(
        "this backup holds a SQLite store, but MNEMO_DATABASE_URL names PostgreSQL: unset it to restore into a data dir " +
          "(to move data to PostgreSQL, use mnemo export and mnemo import)",
      );
    }
    if (existsSync(target))
      throw new Error(
        `${config.dataDir} already has a store of record (${target}); restore into a new or empty data dir`,
      );
    await mkdir(config.dataDir, { recursive: true, mode: OWNER_ONLY_DIR });
    await cp(join(dir, manifest.database!), target);
    await makeOwnerOnly(target);
  } else {
    guidance.push(
      `first restore the database: pg_restore --clean --if-exists --no-owner --dbname "$MNEMO_DATABASE_URL" ${join(dir, "mnemo.pgdump")}, then run mnemo reindex`,
    );
  }
  const blobsDir = localBlobs(config);
  if (manifest.blobs) {
    if (blobsDir === null)
      guidance.push(`copy ${join(dir, "blobs")} to ${config.files.blobsUri} with your storage's tools`);
    else if (!(await isEmptyDir(blobsDir)))
      throw new Error(`${blobsDir} is not empty; restore into a new or empty data dir`);
    else {
      await cp(join(dir, "blobs"), blobsDir, { recursive: true });
      await makeOwnerOnly(blobsDir);
    }
  }
  const keyFile = join(config.dataDir, MASTER_KEY_FILE);
  if (manifest.masterKey) {
    if (existsSync(keyFile)) throw new Error(`${keyFile} exists; restore into a new or empty data dir`);
    await mkdir(config.dataDir, { recursive: true, mode: OWNER_ONLY_DIR });
    await cp(join(dir, MASTER_KEY_FILE), keyFile);
    await makeOwnerOnly(keyFile);
  }
  return guidance;
}
