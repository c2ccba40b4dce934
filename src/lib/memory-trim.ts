import { dlopen, FFIType } from "bun:ffi";

/**
 * Hands memory freed by native code back to the operating system. LanceDB's threads
 * allocate through the C library's malloc, which keeps freed pages in its arenas: after
 * a compaction (old index versions dropped) the process stays as large as at its peak.
 * glibc's `malloc_trim` returns them (docs/performance.md#why-the-code-is-tuned-as-it-is).
 * Elsewhere (musl, macOS) there is no such call and nothing happens.
 */
let trim: (() => void) | null | undefined;

export function releaseFreedMemory(): void {
  if (trim === undefined) trim = load();
  trim?.();
}

function load(): (() => void) | null {
  if (process.platform !== "linux") return null;
  try {
    const libc = dlopen("libc.so.6", { malloc_trim: { args: [FFIType.u64], returns: FFIType.i32 } });
    return () => void libc.symbols.malloc_trim(0);
  } catch {
    return null;
  }
}
