import { setPriority } from "node:os";
import { join } from "node:path";
import { childCommand } from "../../lib/child-command";
import { INDEX_CHILD_COMMAND, type IndexChildRequest } from "../../shared/index-child-protocol";

/** ANN builds yield the CPU to the server (a nice value: 0 is the server's, 19 the lowest). */
const CHILD_NICENESS = 10;

/**
 * Builds an ANN index in an index child process (index-child.ts says why); rejects with the
 * child's reason. `running` holds the child meanwhile, for whoever must stop it.
 */
export async function runInIndexChild(request: IndexChildRequest, running: Set<{ kill(): void }>): Promise<void> {
  // No environment, as the PDF child: what it needs comes in the request, and the server's secrets stay with it.
  const child = Bun.spawn(childCommand(INDEX_CHILD_COMMAND, join(import.meta.dir, "index-child.ts")), {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    env: {},
  });
  running.add(child);
  // An ANN build runs beside the writer: on a busy machine searches and writes go first.
  try {
    setPriority(child.pid, CHILD_NICENESS);
  } catch {
    // Not permitted here (some containers): it runs at the server's priority.
  }
  try {
    child.stdin.write(JSON.stringify(request));
    await child.stdin.end();
    const [out, err, code] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ]);
    if (code !== 0 || out.trim() !== "ok") {
      throw new Error(
        `building the vector index of ${request.table} failed: ${err.trim().slice(0, 300) || `exit ${code}`}`,
      );
    }
  } finally {
    running.delete(child);
  }
}
