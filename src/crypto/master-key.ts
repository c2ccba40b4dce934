import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../config";
import type { Logger } from "../lib/log";
import { decodeKey, generateClientKey } from "./client-key";

/** The file, in the data dir, that holds the embedded server's master key. */
export const MASTER_KEY_FILE = "master.key";
/** Beside it, a rotation's new key until the rotation commits (see `mnemo escrow rotate-master`). */
export const STAGED_KEY_SUFFIX = ".new";

/** Parses a master key given as text (hex or base64); the message never carries the value. */
export function parseMasterKey(text: string, source: string): Buffer {
  const key = decodeKey(text);
  if (!key)
    throw new ConfigError(
      `${source}: must be a 32-byte key as 64 hex characters or base64 (e.g. the output of \`openssl rand -hex 32\`)`,
    );
  return key;
}

/**
 * The server master key that seals escrowed client keys: `SERVER_MASTER_KEY` when set.
 * Without it, the embedded server keeps one in `<data>/master.key` (created once, mode
 * 0600, announced once in the log). Replicas on PostgreSQL share no data dir, so there
 * a configured key is required and its absence stops the start.
 */
export function resolveMasterKey(options: { configured?: string; dataDir: string; postgres: boolean; log?: Logger }): {
  key: Buffer;
  source: "env" | "file";
  path?: string;
} {
  const configured = checkMasterKeyConfig(options);
  if (configured) return { key: configured, source: "env" };
  const path = join(options.dataDir, MASTER_KEY_FILE);
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  try {
    // 'wx' fails when the file exists, so two processes starting together keep one key.
    writeFileSync(path, `${generateClientKey().toString("hex")}\n`, { flag: "wx", mode: 0o600 });
    options.log?.info(
      "created a server master key for client-key escrow (keep it: escrowed keys cannot be opened without it)",
      { path },
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return { key: parseMasterKey(readFileSync(path, "utf8"), path), source: "file", path };
}

/**
 * What can be checked without touching the disk: a configured key parses, and PostgreSQL
 * has one. Run before anything is created, so a start refused here leaves no data dir or
 * key file behind. Returns the configured key, or null when the embedded key file is used.
 */
export function checkMasterKeyConfig(options: { configured?: string; postgres: boolean }): Buffer | null {
  if (options.configured) return parseMasterKey(options.configured, "SERVER_MASTER_KEY");
  if (options.postgres) {
    throw new ConfigError(
      "SERVER_MASTER_KEY is required with PostgreSQL storage (MNEMO_DATABASE_URL): every replica must seal escrowed client keys " +
        "under the same 32-byte key; generate one with `openssl rand -hex 32` and set it on every replica",
    );
  }
  return null;
}

/**
 * The keys a running server may have been rotated to: `<data>/master.key`, and a staged
 * `master.key.new` (a rotation commits before it renames that file into place). Files
 * missing or unreadable are skipped: this is asked when the current key stopped opening.
 */
export function rotatedKeyCandidates(path: string): Buffer[] {
  const keys: Buffer[] = [];
  for (const file of [path, path + STAGED_KEY_SUFFIX]) {
    try {
      const key = decodeKey(readFileSync(file, "utf8"));
      if (key) keys.push(key);
    } catch {}
  }
  return keys;
}
