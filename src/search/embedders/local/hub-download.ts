/**
 * Downloads a model from a Hugging Face-style hub (`<hub>/<repo>/resolve/main/<file>`)
 * into a staging directory, verifies every file's sha256, writes `manifest.json`, and only
 * then swaps the directory into place, so a failed or corrupted download leaves nothing.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, open, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { MANIFEST_FILE, type LocalModelSpec, getModelSpec } from "./model-registry.ts";
import { type ModelManifest, checkModelFiles, modelDirectory } from "./model-files.ts";

/** The public Hugging Face hub. */
export const DEFAULT_HUB_URL = "https://huggingface.co";
// A stalled connection fails after this long without a byte, rather than hanging forever.
const IDLE_TIMEOUT_MS = 30_000;
const MAX_REDIRECTS = 5;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Options of {@link pullModel}. */
export interface PullModelOptions {
  modelsDir: string;
  /** A name from the model registry, e.g. `all-MiniLM-L6-v2`. */
  model: string;
  /** Base URL of the hub; default `https://huggingface.co`. */
  hubUrl?: string;
  /** Download again even when valid files are present. */
  force?: boolean;
  /** Check the registry's pinned hashes and sizes (default true; see `getModelSpec`). */
  pins?: boolean;
  /** Called as bytes arrive; `total` is undefined when the hub sends no length. */
  onProgress?(received: number, total: number | undefined, file: string): void;
}

/** What {@link pullModel} did. */
export interface PullModelResult {
  model: string;
  path: string;
  /** False when valid files were already present. */
  downloaded: boolean;
  sizeBytes: number;
  files: { path: string; size: number; sha256: string }[];
}

/** The hub answered, but not with the file (404, 500, checksum mismatch, …). */
export class ModelDownloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ModelDownloadError";
  }
}

/** The sha256 a hub vouches for: `x-linked-etag` on LFS redirects, else a sha256-shaped `etag`. */
function hubSha256(headers: Headers): string | undefined {
  for (const name of ["x-linked-etag", "etag"]) {
    const value = headers.get(name)?.replace(/^W\//, "").replaceAll('"', "").toLowerCase();
    if (value && SHA256_HEX.test(value)) return value;
  }
  return undefined;
}

/** Follows redirects by hand: the hash header sits on the redirect, not on the CDN's answer. */
async function fetchFile(url: string, signal: AbortSignal): Promise<{ response: Response; sha256?: string }> {
  let current = url;
  let sha256: string | undefined;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const response = await fetch(current, { redirect: "manual", signal });
    sha256 ??= hubSha256(response.headers);
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      current = new URL(location, current).href;
      continue;
    }
    return { response, sha256 };
  }
  throw new ModelDownloadError(`${url}: more than ${MAX_REDIRECTS} redirects`);
}

/** Streams one file to disk, hashing as it goes. Returns undefined for a missing optional file. */
async function downloadFile(
  url: string,
  destination: string,
  optional: boolean,
  onProgress: (received: number, total: number | undefined) => void,
): Promise<{ size: number; sha256: string; hubSha256?: string } | undefined> {
  const abort = new AbortController();
  let idle = setTimeout(() => abort.abort(new Error(`no data for ${IDLE_TIMEOUT_MS / 1000} s`)), IDLE_TIMEOUT_MS);
  try {
    const { response, sha256: expected } = await fetchFile(url, abort.signal);
    if (response.status === 404 && optional) {
      await response.body?.cancel();
      return undefined;
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new ModelDownloadError(`${url}: HTTP ${response.status}`);
    }
    const length = Number(response.headers.get("content-length"));
    const total = Number.isFinite(length) && length > 0 ? length : undefined;
    const hasher = new Bun.CryptoHasher("sha256");
    await mkdir(dirname(destination), { recursive: true });
    const file = await open(destination, "w");
    let received = 0;
    try {
      for await (const chunk of response.body) {
        clearTimeout(idle);
        idle = setTimeout(() => abort.abort(new Error(`no data for ${IDLE_TIMEOUT_MS / 1000} s`)), IDLE_TIMEOUT_MS);
        hasher.update(chunk);
        await file.write(chunk);
        received += chunk.byteLength;
        onProgress(received, total);
      }
    } finally {
      await file.close();
    }
    return { size: received, sha256: hasher.digest("hex"), hubSha256: expected };
  } finally {
    clearTimeout(idle);
  }
}

/** Refuses a file that differs from its pinned sha256 and size, or from the hub's own hash. */
export function checkSha256(
  spec: LocalModelSpec,
  path: string,
  actual: string,
  fromHub: string | undefined,
  size?: number,
): void {
  const bytes = spec.pinnedBytes[path];
  if (bytes !== undefined && size !== undefined && size !== bytes) {
    throw new ModelDownloadError(`size mismatch for ${path}: pinned ${bytes} bytes, got ${size}`);
  }
  for (const [source, expected] of [
    ["pinned", spec.pinnedSha256[path]],
    ["hub", fromHub],
  ] as const) {
    if (expected && expected !== actual) {
      throw new ModelDownloadError(`checksum mismatch for ${path}: ${source} sha256 ${expected}, got ${actual}`);
    }
  }
}

/**
 * Replaces `<modelsDir>/<model>` with the staged directory. Each rename is atomic; between
 * the two a reader sees no model, never a mix of old and new files.
 */
export async function swapIntoPlace(staging: string, target: string): Promise<void> {
  if (!existsSync(target)) {
    await rename(staging, target);
    return;
  }
  const old = `${staging}.old`;
  await rename(target, old);
  await rename(staging, target);
  await rm(old, { recursive: true, force: true });
}

/**
 * Downloads a model's files from the hub, verified by sha256, into `<modelsDir>/<model>/`.
 * Skips the download when valid files are present (unless `force`).
 *
 * @throws Error for an unknown model name; ModelDownloadError or a network error otherwise.
 * @example
 * await pullModel({ modelsDir, model: "all-MiniLM-L6-v2", onProgress: (got, total) => draw(got, total) });
 */
export async function pullModel(options: PullModelOptions): Promise<PullModelResult> {
  const spec = getModelSpec(options.model, { pins: options.pins });
  const hub = (options.hubUrl ?? DEFAULT_HUB_URL).replace(/\/+$/, "");
  const target = modelDirectory(options.modelsDir, spec.name);
  if (!options.force) {
    const status = await checkModelFiles(options.modelsDir, spec);
    if (status.state === "present") {
      return { model: spec.name, path: target, downloaded: false, sizeBytes: status.sizeBytes, files: [] };
    }
  }
  await mkdir(options.modelsDir, { recursive: true });
  // Staging inside the models dir keeps the final rename on one filesystem (atomic).
  const staging = await mkdtemp(join(options.modelsDir, `.pull-${spec.name}-`));
  try {
    const manifest: ModelManifest = {
      model: spec.name,
      repo: spec.repo,
      hub,
      downloadedAt: new Date().toISOString(),
      files: {},
    };
    for (const file of spec.files) {
      const url = `${hub}/${spec.repo}/resolve/main/${file.path}`;
      const result = await downloadFile(url, join(staging, file.path), !file.required, (received, total) =>
        options.onProgress?.(received, total, file.path),
      );
      if (!result) continue;
      checkSha256(spec, file.path, result.sha256, result.hubSha256, result.size);
      manifest.files[file.path] = { sha256: result.sha256, size: result.size };
    }
    await writeFile(join(staging, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    await swapIntoPlace(staging, target);
    const files = Object.entries(manifest.files).map(([path, entry]) => ({ path, ...entry }));
    return {
      model: spec.name,
      path: target,
      downloaded: true,
      sizeBytes: files.reduce((sum, f) => sum + f.size, 0),
      files,
    };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
