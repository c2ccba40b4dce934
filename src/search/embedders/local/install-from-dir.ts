/**
 * `mnemo models install --from DIR`: puts a model's files on a machine without network.
 * The files (in the hub's layout: `tokenizer.json`, `onnx/model_quantized.onnx`, …) are
 * copied into a staging directory, checked against the registry's pinned hashes and
 * sizes, given a `manifest.json`, and swapped into place as a download is, so a refused
 * copy leaves the installed model (if any) as it was.
 */
import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { MANIFEST_FILE, getModelSpec } from "./model-registry.ts";
import { type ModelManifest, modelDirectory, sha256File } from "./model-files.ts";
import { ModelDownloadError, type PullModelResult, checkSha256, swapIntoPlace } from "./hub-download.ts";

/** Options of {@link installModelFromDir}. */
export interface InstallModelOptions {
  modelsDir: string;
  /** A name from the model registry, e.g. `all-MiniLM-L6-v2`. */
  model: string;
  /** A directory holding the model's files in the hub's layout (a copy of the hub repository works). */
  from: string;
  /** Check the registry's pinned hashes and sizes (default true; see `getModelSpec`). */
  pins?: boolean;
}

/**
 * Copies a model's files from `from` into `<modelsDir>/<model>/`, verified.
 *
 * @throws Error for an unknown model name; ModelDownloadError (one line) for a missing
 * required file or a file that differs from its pin.
 * @example
 * await installModelFromDir({ modelsDir, model: "all-MiniLM-L6-v2", from: "/media/usb/all-MiniLM-L6-v2" });
 */
export async function installModelFromDir(options: InstallModelOptions): Promise<PullModelResult> {
  const spec = getModelSpec(options.model, { pins: options.pins });
  const source = resolve(options.from);
  const missing = spec.files
    .filter((file) => file.required && !existsSync(join(source, file.path)))
    .map((file) => file.path);
  if (missing.length) throw new ModelDownloadError(`${source} lacks ${missing.join(", ")}`);
  await mkdir(options.modelsDir, { recursive: true });
  // Staging inside the models dir keeps the final rename on one filesystem (atomic).
  const staging = await mkdtemp(join(options.modelsDir, `.install-${spec.name}-`));
  try {
    const manifest: ModelManifest = {
      model: spec.name,
      repo: spec.repo,
      hub: `file://${source}`,
      downloadedAt: new Date().toISOString(),
      files: {},
    };
    for (const file of spec.files) {
      const from = join(source, file.path);
      if (!existsSync(from)) continue;
      const to = join(staging, file.path);
      await mkdir(dirname(to), { recursive: true });
      await copyFile(from, to);
      // The copy is what gets verified and used, not the source that could change meanwhile.
      const [sha256, { size }] = await Promise.all([sha256File(to), stat(to)]);
      checkSha256(spec, file.path, sha256, undefined, size);
      manifest.files[file.path] = { sha256, size };
    }
    await writeFile(join(staging, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    const target = modelDirectory(options.modelsDir, spec.name);
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
