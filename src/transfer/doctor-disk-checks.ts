import { existsSync } from "node:fs";
import { access, constants, statfs } from "node:fs/promises";
import type { Config } from "../config";
import { exposedEntries } from "../lib/owner-only";
import type { Check } from "./doctor-check";

// `mnemo doctor`'s checks of the data dir on disk: there, writable, owner-only, room left.

const MIN_FREE_BYTES = 1024 ** 3;
const gb = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GB`;

export async function dataDirCheck(config: Config): Promise<Check> {
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

export async function diskCheck(config: Config): Promise<Check> {
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
