import chalk from "chalk";
import type { Command } from "commander";
import { CliError, plural, printJson, progressBar, systemFailureMessage } from "../output";

async function loadCliConfig(dataDir: string | undefined) {
  const { loadConfig } = await import("../../src/config");
  try {
    return loadConfig({ dataDir, logLevel: "warn" });
  } catch (error) {
    throw new CliError((error as Error).message);
  }
}

/** `mnemo backup --out DIR` and `mnemo restore DIR`. */
export function registerBackupCommands(program: Command): void {
  program
    .command("backup")
    .description(
      "take a consistent snapshot of the data dir while the server runs (store of record, file bytes, master key)",
    )
    .requiredOption("--out <dir>", "a new or empty directory for the backup")
    .option("--data <dir>", "data directory")
    .option("--json", "machine-readable output")
    .addHelpText(
      "after",
      `
SQLite: the database is copied with VACUUM INTO (one consistent read; the server keeps serving),
then <data>/blobs and <data>/master.key. The search index is not copied: restore rebuilds it.
PostgreSQL: the blobs and key are copied and the pg_dump command to run is printed.

Exit codes: 0 backup written, 1 error.

Example:
  mnemo backup --out /backups/mnemo-$(date +%F)`,
    )
    .action(async (options: { out: string; data?: string; json?: boolean }) => {
      const config = await loadCliConfig(options.data);
      const { backup } = await import("../../src/transfer/backup");
      let result: Awaited<ReturnType<typeof backup>>;
      try {
        result = await backup(config, options.out);
      } catch (error) {
        throw new CliError(systemFailureMessage(error) ?? (error as Error).message);
      }
      if (options.json) return printJson(result);
      const parts = [
        result.manifest.database ? "store of record" : null,
        result.manifest.blobs ? "file bytes" : null,
        result.manifest.masterKey ? "master key" : null,
      ];
      process.stdout.write(
        `backed up ${parts.filter(Boolean).join(", ") || "nothing"} to ${result.dir} (${(result.bytes / 1024 / 1024).toFixed(1)} MB)\n`,
      );
      for (const line of result.guidance) process.stdout.write(`${chalk.yellow(`next: ${line}`)}\n`);
    });

  program
    .command("restore")
    .description("restore a backup into a new or empty data dir and rebuild the search index")
    .argument("<dir>", "a directory written by mnemo backup")
    .option("--data <dir>", "the data directory to restore into (must hold no store yet)")
    .option("--json", "machine-readable output")
    .addHelpText(
      "after",
      `
Never overwrites: a data dir that already has a store of record (or blobs, or a master key) is refused.
The search index is rebuilt from the restored store before the command returns (vectors, when an
embedder is configured, are filled in by the server afterwards).

Exit codes: 0 restored, 1 error.

Example:
  mnemo restore /backups/mnemo-2026-11-25 --data ~/.mnemo-restored`,
    )
    .action(async (dir: string, options: { data?: string; json?: boolean }) => {
      const config = await loadCliConfig(options.data);
      const { readManifest, restoreFiles } = await import("../../src/transfer/backup");
      let guidance: string[];
      let manifest: Awaited<ReturnType<typeof readManifest>>;
      try {
        manifest = await readManifest(dir);
        guidance = await restoreFiles(config, dir, manifest);
      } catch (error) {
        throw new CliError(systemFailureMessage(error) ?? (error as Error).message);
      }
      let sources = 0;
      if (manifest.store === "sqlite") {
        const { openServices } = await import("../../src/compose");
        const services = await openServices(config, { startIndexer: false });
        const bar = options.json ? null : progressBar("rebuilding the search index");
        try {
          await services.store.transaction((tx) => services.outbox.enqueueRebuild(tx));
          await services.indexer.start();
          for (let pending = 1; pending > 0; ) {
            await services.indexer.drain();
            const stats = await services.indexer.stats();
            pending = stats.pendingText + ((await services.outbox.pendingTextSeq("*")) !== null ? 1 : 0);
            if (!services.indexer.isWriter)
              throw new CliError(
                "another process writes the search index of this data dir; stop it and run mnemo reindex",
              );
          }
          sources = await services.indexer.countSources();
          bar?.update(sources, sources);
        } finally {
          bar?.finish();
          await services.close();
        }
      }
      const summary = {
        restored: dir,
        dataDir: config.dataDir,
        store: manifest.store,
        blobs: manifest.blobs,
        masterKey: manifest.masterKey,
        indexedSources: sources,
        guidance,
      };
      if (options.json) return printJson(summary);
      process.stdout.write(
        `restored ${dir} into ${config.dataDir}${manifest.store === "sqlite" ? `; search index rebuilt (${plural(sources, "source")})` : ""}\n`,
      );
      for (const line of guidance) process.stdout.write(`${chalk.yellow(`next: ${line}`)}\n`);
    });
}
