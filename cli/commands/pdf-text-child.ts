import type { Command } from "commander";
import { PDF_TEXT_CHILD_COMMAND } from "../../src/files/pdf-text-protocol";
import { examples } from "../output";

/**
 * The PDF text child, hidden: a compiled binary runs only its main entry, so the server
 * starts its PDF reader as `mnemo __pdf-text-child` (src/files/pdf-text.ts). Not for people.
 */
export function registerPdfTextChildCommand(program: Command): void {
  program
    .command(PDF_TEXT_CHILD_COMMAND, { hidden: true })
    .description("internal: reads one PDF's text from stdin for the server, within its budget (not for people)")
    .addHelpText("after", examples(`mnemo ${PDF_TEXT_CHILD_COMMAND} < file.pdf`))
    .action(async () => {
      const { runPdfTextChild } = await import("../../src/files/pdf-text-child");
      await runPdfTextChild();
    });
}
