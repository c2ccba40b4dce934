import { join } from "node:path";
import { INDEX_CHILD_COMMAND, type IndexChildRequest } from "../../shared/index-child-protocol";

/**
 * The command that starts the child: this very binary with a hidden command when compiled,
 * the module itself otherwise.
 */
function childCommand(): string[] {
  if (Bun.isStandaloneExecutable) return [process.execPath, INDEX_CHILD_COMMAND];
  return [process.execPath, join(import.meta.dir, "index-child.ts")];
}

/**
 * Runs one request in an index child process (index-child.ts says why); rejects with the
 * child's reason. `running` holds the child meanwhile, for whoever must stop it.
 */
export async function runInIndexChild(request: IndexChildRequest, running: Set<{ kill(): void }>): Promise<void> {
  const child = Bun.spawn(childCommand(), { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  running.add(child);
  try {
    child.stdin.write(JSON.stringify(request));
    await child.stdin.end();
    const [out, err, code] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ]);
    if (code !== 0 || out.trim() !== "ok") {
      const what =
        request.op === "vector-index" ? `building the vector index of ${request.table}` : "compacting index tables";
      throw new Error(`${what} failed: ${err.trim().slice(0, 300) || `exit ${code}`}`);
    }
  } finally {
    running.delete(child);
  }
}
