import { lstatSync, readdirSync } from "node:fs";
import { chmod, lstat, readdir } from "node:fs/promises";
import { join } from "node:path";

/** Modes of what Mnemo creates: only its own user reads or writes it. */
export const OWNER_ONLY_DIR = 0o700;
export const OWNER_ONLY_FILE = 0o600;

/**
 * Makes every file and directory this process creates from now on owner-only (0600 and
 * 0700), whoever creates it: our own code, SQLite (its WAL and SHM take the database
 * file's mode) and LanceDB's native writer, which opens its files itself and honours
 * only the umask. Process-wide on purpose; it works the same in the compiled binary.
 * Called by the CLI entry and by `openServices` (so by `startServer` too).
 */
export function restrictNewFiles(): void {
  process.umask(0o077);
}

/** Sets owner-only modes on `path` and everything under it (symlinks are left alone): for copies of files made before. */
export async function makeOwnerOnly(path: string): Promise<void> {
  const info = await lstat(path);
  if (info.isSymbolicLink()) return;
  if (info.isDirectory()) {
    await chmod(path, OWNER_ONLY_DIR);
    for (const entry of await readdir(path)) await makeOwnerOnly(join(path, entry));
  } else {
    await chmod(path, OWNER_ONLY_FILE);
  }
}

export interface ExposedEntry {
  path: string;
  mode: number;
}

/** The names in a directory; none when it cannot be read (removed meanwhile, or not ours to list). */
function readdirOrNone(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

/**
 * Entries under `root` (itself included) that other users may read, write or enter:
 * a directory with any group/other bit, a file group/other-readable or -writable.
 * A directory other users cannot enter hides everything below it, so the walk goes
 * below open directories only: an owner-only data dir costs one `lstat`, however many
 * index tables it holds (at 10,000 tables the full walk took over 200 ms of `mnemo
 * serve`'s start). Stops after `limit` entries looked at; `complete` says whether it saw
 * them all. Read with synchronous calls: `mnemo serve` walks the data dir before it
 * starts (and doctor before its other checks), where nothing waits on the event loop,
 * and each entry costs 4–6 µs instead of ~19 µs awaited.
 */
export async function exposedEntries(
  root: string,
  limit = 50_000,
): Promise<{ exposed: ExposedEntry[]; complete: boolean }> {
  const exposed: ExposedEntry[] = [];
  const pending = [root];
  let seen = 0;
  while (pending.length) {
    if (seen++ >= limit) return { exposed, complete: false };
    const path = pending.pop()!;
    let info: ReturnType<typeof lstatSync>;
    try {
      info = lstatSync(path);
    } catch {
      continue; // removed meanwhile (a compaction, a WAL at close)
    }
    if (info.isSymbolicLink()) continue;
    const mode = info.mode & 0o777;
    if (info.isDirectory()) {
      if (!(mode & 0o077)) continue;
      exposed.push({ path, mode });
      for (const entry of readdirOrNone(path)) pending.push(join(path, entry));
    } else if (mode & 0o066) {
      exposed.push({ path, mode });
    }
  }
  return { exposed, complete: true };
}
