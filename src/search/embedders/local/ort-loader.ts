/**
 * Loads onnxruntime-node, also from a `bun build --compile` binary.
 *
 * Why: the addon `onnxruntime_binding.node` is linked against `libonnxruntime.so.1` and
 * finds it through `RUNPATH=$ORIGIN`. `--compile` embeds the addon (and writes it to a
 * temp dir when required) but not the library beside it, so the addon's dlopen fails.
 * Workaround: embed the library as a file asset, write it to a per-user cache dir, and
 * dlopen it with `bun:ffi` before the addon loads; the dynamic linker then satisfies the
 * addon's `NEEDED libonnxruntime.so.1` with the already-loaded library (matched by soname).
 */
import { dlopen } from "bun:ffi";
import { existsSync, mkdirSync, mkdtempSync, renameSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

type OnnxRuntime = typeof import("onnxruntime-node");

let loading: Promise<OnnxRuntime> | undefined;
// Keeps the preloaded library's handle alive for the life of the process.
let preloadedLibrary: { close(): void } | undefined;

/**
 * The native library embedded for this platform, as a `$bunfs` path inside a compiled
 * binary. `process.platform`/`process.arch` are constants in a compiled build, so the
 * bundler keeps only the branch of the target (a linux-x64 binary carries 45 MB, not all).
 */
async function embeddedNativeLibrary(): Promise<{ path: string; fileName: string } | undefined> {
  if (process.platform === "linux" && process.arch === "x64") {
    const lib = await import("onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1", { with: { type: "file" } });
    return { path: lib.default, fileName: "libonnxruntime.so.1" };
  }
  if (process.platform === "linux" && process.arch === "arm64") {
    const lib = await import("onnxruntime-node/bin/napi-v6/linux/arm64/libonnxruntime.so.1", {
      with: { type: "file" },
    });
    return { path: lib.default, fileName: "libonnxruntime.so.1" };
  }
  // Other platforms are not built as binaries yet; from source the addon finds its library.
  return undefined;
}

/**
 * Copies the embedded library out of the binary once per platform and size. The cache dir
 * belongs to the user (under the models dir), so no other user can plant a library there;
 * when it is not writable, a fresh private temp dir is used instead.
 */
async function extractLibrary(blob: Blob, fileName: string, cacheDir: string): Promise<string> {
  const target = join(cacheDir, `onnxruntime-${process.platform}-${process.arch}-${blob.size}`, fileName);
  if (existsSync(target) && statSync(target).size === blob.size) return target;
  const bytes = new Uint8Array(await blob.arrayBuffer());
  try {
    mkdirSync(dirname(target), { recursive: true });
    // Write then rename, so a concurrent process never dlopens a half-written library.
    const partial = `${target}.${process.pid}.partial`;
    writeFileSync(partial, bytes);
    renameSync(partial, target);
    return target;
  } catch {
    const fallback = join(mkdtempSync(join(tmpdir(), "mnemo-ort-")), fileName);
    writeFileSync(fallback, bytes);
    return fallback;
  }
}

async function preloadNativeLibrary(cacheDir: string): Promise<void> {
  if (!Bun.isStandaloneExecutable || preloadedLibrary) return;
  const embedded = await embeddedNativeLibrary();
  if (!embedded) return;
  const path = await extractLibrary(Bun.file(embedded.path), embedded.fileName, cacheDir);
  preloadedLibrary = dlopen(path, { OrtGetApiBase: { args: [], returns: "ptr" } });
}

/**
 * Imports onnxruntime-node once, preloading its native library first inside a compiled
 * binary. Never imported eagerly: the 45 MB runtime loads only when the local model runs.
 *
 * @param cacheDir where a compiled binary may cache the extracted native library.
 * @example
 * const ort = await loadOnnxRuntime(join(modelsDir, ".runtime"));
 * const session = await ort.InferenceSession.create(modelPath);
 */
export function loadOnnxRuntime(cacheDir: string): Promise<OnnxRuntime> {
  if (!loading) {
    loading = (async () => {
      await preloadNativeLibrary(cacheDir);
      return await import("onnxruntime-node");
    })();
    // A failed load may succeed later (e.g. once a full disk has room for the library).
    loading.catch(() => {
      loading = undefined;
    });
  }
  return loading;
}
