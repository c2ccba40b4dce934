import type { Command } from "commander";
import { VECTOR_INDEX_CHILD_COMMAND } from "../../src/shared/vector-index-protocol";
import { examples } from "../output";

/**
 * The vector-index child, hidden: a compiled binary runs only its main entry, so the index
 * writer starts its ANN builds as `mnemo __vector-index-child` (src/search/lance/vector-index-build.ts). Not for people.
 */
export function registerVectorIndexChildCommand(program: Command): void {
  program
    .command(VECTOR_INDEX_CHILD_COMMAND, { hidden: true })
    .description("internal: builds one index table's ANN index for the server (not for people)")
    .addHelpText("after", examples(`mnemo ${VECTOR_INDEX_CHILD_COMMAND} < request.json`))
    .action(async () => {
      const { runVectorIndexChild } = await import("../../src/search");
      await runVectorIndexChild();
    });
}
