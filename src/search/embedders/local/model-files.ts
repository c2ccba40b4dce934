/**
 * What is on disk for a model: which files are present, whether they match the
 * `manifest.json` written after a verified download, and how big they are.
 */
import { existsSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type LocalModelSpec, MANIFEST_FILE, getModelSpec, knownModelNames } from "./model-registry.ts";

/** `manifest.json` of a model directory. */
export interface ModelManifest {
  model: string;
  repo: string;
  /** Base URL the files came from. */
  hub: string;
  downloadedAt: string;
  files: Record<string, { sha256: string; size: number }>;
}

/**
 * - `present`: every required file is there and matches the manifest (if there is one).
 * - `absent`: no required file is there.
 * - `incomplete`: some required files are missing.
 * - `corrupt`: a file differs from its manifest entry or its pinned sha256.
 */
export type ModelState = "present" | "absent" | "incomplete" | "corrupt";

/** One model as seen on disk; what `mnemo models list` prints. */
export interface ModelStatus {
  name: string;
  state: ModelState;
  /** `<modelsDir>/<name>`. */
  path: string;
  /** Bytes of the model's files that are present. */
  sizeBytes: number;
  dimension: number;
  /** True when the files were checked against a manifest (i.e. came from a verified download). */
  verified: boolean;
  /** Why the state is not `present`, in a few words. */
  problem?: string;
}

/** Directory of a model inside the models dir. */
export function modelDirectory(modelsDir: string, name: string): string {
  return join(modelsDir, name);
}

/** Hex sha256 of a file, streamed so that a 100 MB model does not sit in memory twice. */
export async function sha256File(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(path).stream()) hasher.update(chunk);
  return hasher.digest("hex");
}

async function readManifest(dir: string): Promise<ModelManifest | undefined> {
  const path = join(dir, MANIFEST_FILE);
  if (!existsSync(path)) return undefined;
  try {
    const manifest = JSON.parse(await readFile(path, "utf8")) as ModelManifest;
    return typeof manifest?.files === "object" ? manifest : undefined;
  } catch {
    return undefined;
  }
}

function fileSize(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

/**
 * Inspects a model directory. With `verify` (the default) every file listed in the
 * manifest or pinned in the registry is hashed (the cost: docs/performance.md#why-the-code-is-tuned-as-it-is).
 */
export async function checkModelFiles(
  modelsDir: string,
  spec: LocalModelSpec,
  options: { verify?: boolean } = {},
): Promise<ModelStatus> {
  const dir = modelDirectory(modelsDir, spec.name);
  const status: ModelStatus = {
    name: spec.name,
    state: "present",
    path: dir,
    sizeBytes: 0,
    dimension: spec.dimension,
    verified: false,
  };
  const missing: string[] = [];
  for (const file of spec.files) {
    const size = fileSize(join(dir, file.path));
    if (size === undefined) {
      if (file.required) missing.push(file.path);
    } else {
      status.sizeBytes += size;
    }
  }
  const required = spec.files.filter((file) => file.required).length;
  if (missing.length === required) return { ...status, state: "absent", problem: `not found in ${dir}` };
  if (missing.length > 0) return { ...status, state: "incomplete", problem: `missing ${missing.join(", ")} in ${dir}` };

  const manifest = await readManifest(dir);
  if (options.verify === false) return { ...status, verified: manifest !== undefined };
  for (const [path, bytes] of Object.entries(spec.pinnedBytes)) {
    const size = fileSize(join(dir, path));
    if (size !== undefined && size !== bytes)
      return { ...status, state: "corrupt", problem: `${path} has ${size} bytes, pinned ${bytes}` };
  }
  const expected: Record<string, string> = { ...spec.pinnedSha256 };
  for (const [path, entry] of Object.entries(manifest?.files ?? {})) {
    const size = fileSize(join(dir, path));
    if (size !== entry.size)
      return { ...status, state: "corrupt", problem: `${path} has ${size ?? "no"} bytes, manifest says ${entry.size}` };
    expected[path] ??= entry.sha256;
  }
  for (const [path, sha256] of Object.entries(expected)) {
    if (!existsSync(join(dir, path))) continue;
    const actual = await sha256File(join(dir, path));
    if (actual !== sha256)
      return {
        ...status,
        state: "corrupt",
        problem: `checksum mismatch for ${path} (expected ${sha256.slice(0, 12)}…, got ${actual.slice(0, 12)}…)`,
      };
  }
  return { ...status, verified: manifest !== undefined };
}

/**
 * Every known model and its state in `modelsDir`.
 *
 * @example
 * for (const model of await listModels(modelsDir)) console.log(model.name, model.state);
 */
export async function listModels(
  modelsDir: string,
  options: { verify?: boolean; pins?: boolean } = {},
): Promise<ModelStatus[]> {
  return Promise.all(knownModelNames().map((name) => checkModelFiles(modelsDir, getModelSpec(name, options), options)));
}

/**
 * A cheap fingerprint (sizes and mtimes) of a model's files; when it changes, something
 * new was put in place and loading is worth another try.
 */
export function modelFilesFingerprint(modelsDir: string, spec: LocalModelSpec): string {
  const dir = modelDirectory(modelsDir, spec.name);
  return [...spec.files.map((file) => file.path), MANIFEST_FILE]
    .map((path) => {
      try {
        const stat = statSync(join(dir, path));
        return `${stat.size}:${stat.mtimeMs}:${stat.ino}`;
      } catch {
        return "-";
      }
    })
    .join("|");
}
