import type { Command } from "commander";
import { INDEX_CHILD_COMMAND, INDEX_WRITER_COMMAND } from "../../src/shared/index-child-protocol";
import { examples } from "../output";

/**
 * The index children, hidden: a compiled binary runs only its main entry, so the index
 * writer starts its ANN builds and compactions as `mnemo __index-child`
 * (src/search/lance/index-child-process.ts) and the child that makes its writes as
 * `mnemo __index-writer` (src/search/lance/writer-child-process.ts). Not for people.
 */
export function registerIndexChildCommand(program: Command): void {
  program
    .command(INDEX_CHILD_COMMAND, { hidden: true })
    .description("internal: builds an ANN index or compacts index tables for the server (not for people)")
    .addHelpText("after", examples(`mnemo ${INDEX_CHILD_COMMAND} < request.json`))
    .action(async () => {
      const { runIndexChild } = await import("../../src/search");
      await runIndexChild();
    });
  program
    .command(INDEX_WRITER_COMMAND, { hidden: true })
    .description("internal: makes the search index's writes for the server (not for people)")
    .addHelpText("after", examples(`mnemo ${INDEX_WRITER_COMMAND} < frames`))
    .action(async () => {
      const { runWriterChild } = await import("../../src/search");
      await runWriterChild();
    });
}
