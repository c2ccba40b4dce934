import { join } from "node:path";
import { VECTOR_INDEX_CHILD_COMMAND, type VectorIndexRequest } from "../../shared/vector-index-protocol";

/**
 * The command that starts the child: this very binary with a hidden command when compiled,
 * the module itself otherwise.
 */
function childCommand(): string[] {
  if (Bun.isStandaloneExecutable) return [process.execPath, VECTOR_INDEX_CHILD_COMMAND];
  return [process.execPath, join(import.meta.dir, "vector-index-child.ts")];
}

/**
 * Builds one table's ANN index in a child process (vector-index-child.ts says why); rejects
 * with the child's reason. `running` holds the child meanwhile, for whoever must stop it.
 */
export async function buildVectorIndexApart(
  request: VectorIndexRequest,
  running: Set<{ kill(): void }>,
): Promise<void> {
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
    if (code !== 0 || out.trim() !== "ok")
      throw new Error(
        `building the vector index of ${request.table} failed: ${err.trim().slice(0, 300) || `exit ${code}`}`,
      );
  } finally {
    running.delete(child);
  }
}
