import type { Command } from "commander";
import { CliError, systemFailureMessage } from "../output";

/** `mnemo export --user ID --out FILE`: every row the user has, as lossless JSON Lines. */
export function registerExportCommand(program: Command): void {
  program
    .command("export")
    .description("export everything a user has as JSON Lines (import restores it with the same ids and times)")
    .requiredOption("--user <id>", "the user whose data is exported")
    .requiredOption("--out <file>", "where to write the JSONL ('-' for standard output)")
    .option("--with-files", "also include each file's bytes (base64 lines of 1 MB)")
    .option("--data <dir>", "data directory")
    .option("--json", "print a summary (counts by record type) as JSON")
    .addHelpText(
      "after",
      `
Lines: a header {"type":"header","format":"mnemo-export","version":1,"userId":…}, then one record per stored row:
profile, workspace, workspace_artifact (notebook registry, block index, manifest, edges), memory, document,
indexed_document, chat_thread, chat_message, file (metadata), file_block (extracted text); with --with-files,
file_data lines carry the bytes. The same data always exports to the same bytes.

Exit codes: 0 written, 1 error.

Example:
  mnemo export --user alice --out alice.jsonl
  mnemo import alice.jsonl --user alice --data /srv/new-mnemo`,
    )
    .action(async (options: { user: string; out: string; withFiles?: boolean; data?: string; json?: boolean }) => {
      if (!options.user.trim()) throw new CliError("--user: must not be empty");
      const toStdout = options.out === "-";
      // Before the store opens: a bad --out is said in one line, naming it (not the .partial beside it).
      if (!toStdout) (await import("../preflight")).checkOutputFile(options.out, "--out");
      const { openTransferStore } = await import("../../src/transfer/open");
      const { exportLines } = await import("../../src/transfer/export");
      const { rename, rm } = await import("node:fs/promises");
      const opened = await openTransferStore(options.data).catch((error: Error) => {
        throw new CliError(error.message);
      });
      // Written beside the target and renamed at the end: a failed export never leaves half a file under the name.
      const partial = `${options.out}.partial`;
      const sink = toStdout ? Bun.stdout.writer() : Bun.file(partial).writer();
      const counts: Record<string, number> = {};
      // LanceDB (the blob store) loads only for --with-files.
      const blobs = options.withFiles
        ? await (await import("../../src/blobs/store")).BlobStore.open(
            (await import("../../src/blobs/store")).blobsLocation(opened.config),
          )
        : null;
      const fileBytes = blobs ? (blobId: string, size: number) => blobs.read(blobId, size) : undefined;
      try {
        for await (const line of exportLines(opened.store.db, options.user, counts, { fileBytes }))
          sink.write(`${line}\n`);
        await sink.end();
        if (!toStdout) await rename(partial, options.out);
      } catch (error) {
        if (!toStdout) await rm(partial, { force: true });
        throw new CliError(
          `export failed: ${(!toStdout && systemFailureMessage(error, options.out)) || (error as Error).message}`,
        );
      } finally {
        blobs?.close();
        await opened.close();
      }
      const summary = { user: options.user, out: options.out, records: counts };
      // With --out -, stdout holds the export: the summary goes to stderr.
      if (options.json) (toStdout ? process.stderr : process.stdout).write(`${JSON.stringify(summary, null, 2)}\n`);
      else {
        const text = Object.entries(counts)
          .map(([type, n]) => `${n} ${type}`)
          .join(", ");
        process.stderr.write(
          `exported ${text || "nothing (the user has no data)"}${toStdout ? "" : ` to ${options.out}`}\n`,
        );
      }
    });
}
