import type { Command } from "commander";
import { PDF_TEXT_CHILD_COMMAND } from "../../src/files/pdf-text-protocol";

/**
 * The PDF text child, hidden: a compiled binary runs only its main entry, so the server
 * starts its PDF reader as `mnemo __pdf-text-child` (src/files/pdf-text.ts). Not for people.
 */
export function registerPdfTextChildCommand(program: Command): void {
  program.command(PDF_TEXT_CHILD_COMMAND, { hidden: true }).action(async () => {
    const { runPdfTextChild } = await import("../../src/files/pdf-text-child");
    await runPdfTextChild();
  });
}
