import type { Command } from "commander";
import { CliError, examples, plural, printJson, progressBar } from "../output";

const POLL_MS = 200;

/**
 * `mnemo reindex`: rebuilds the search index from the store of record. When a server
 * holds the index writer lease (on this data dir, or on the shared PostgreSQL database), the rebuild is handed to it through the outbox and
 * followed from here; otherwise this process rebuilds the index itself.
 */
export function registerReindexCommand(program: Command): void {
  program
    .command("reindex")
    .description("rebuild the search index (LanceDB) from the store of record (SQLite or PostgreSQL)")
    .option("--data <dir>", "data directory")
    .option("--embeddings", "also wait until every vector is filled in (needs a working embedder)")
    .option("--json", "machine-readable output")
    .addHelpText(
      "after",
      `
With a server running on the same data dir (or database), the server rebuilds and this command follows it;
otherwise this command rebuilds the index itself. With --embeddings it also waits for every vector and
stops with the reason when vectors cannot be made (no embedding model, the embeddings API down).

Exit codes: 0 rebuilt, 1 error.
${examples("mnemo reindex --data ~/.mnemo", "mnemo reindex --embeddings")}`,
    )
    .action(async (options: { data?: string; embeddings?: boolean; json?: boolean }) => {
      // Services open LanceDB (a 200 MB native module): imported only when this command runs.
      const [{ loadConfig }, { openServices }] = await Promise.all([
        import("../../src/config"),
        import("../../src/compose"),
      ]);
      let config: ReturnType<typeof loadConfig>;
      try {
        config = loadConfig({ dataDir: options.data, logLevel: "warn" });
      } catch (error) {
        throw new CliError((error as Error).message);
      }
      const services = await openServices(config, { startIndexer: false });
      const outage = () => services.indexer.vectorOutage();
      const started = Date.now();
      try {
        const total = await services.indexer.countSources();
        // The writer records why vectors cannot be made; only a record made after this point is this run's.
        const outageBefore = (await outage())?.raw ?? null;
        await services.store.transaction((tx) => services.outbox.enqueueRebuild(tx));
        await services.indexer.start();
        const byServer = !services.indexer.isWriter;
        const bar = options.json ? null : progressBar(byServer ? "reindexing (by the running server)" : "reindexing");
        const waitForVectors = Boolean(options.embeddings && services.embedder);
        const noVectors = async (waiting: number) => {
          const reason = (await outage())?.outage.reason ?? "the embedder is unavailable";
          return new CliError(
            `the full-text index is rebuilt, but vectors cannot be made: ${reason}; ${waiting} wait in the queue and are filled in once the embedder answers`,
          );
        };
        try {
          for (;;) {
            const stats = await services.indexer.stats();
            const pending = stats.pendingText + (waitForVectors ? stats.pendingVector : 0);
            const rebuildQueued = (await services.outbox.pendingTextSeq("*")) !== null;
            bar?.update(rebuildQueued ? 0 : Math.max(0, total - pending), total);
            if (!rebuildQueued && pending === 0) break;
            if (!byServer) {
              await services.indexer.drain();
              const { pendingVector } = await services.indexer.stats();
              if (waitForVectors && pendingVector > 0) throw await noVectors(pendingVector);
              continue;
            }
            // Following the server: once its text stage is done, a vector failure it recorded since the start ends the wait.
            if (waitForVectors && !rebuildQueued && stats.pendingText === 0 && stats.pendingVector > 0) {
              const recorded = await outage();
              if (recorded && recorded.raw !== outageBefore) throw await noVectors(stats.pendingVector);
            }
            await Bun.sleep(POLL_MS);
          }
        } finally {
          bar?.finish();
        }
        const summary = {
          sources: total,
          seconds: (Date.now() - started) / 1000,
          by: byServer ? "server" : "cli",
          ...(await services.indexer.stats()),
        };
        if (options.json) printJson(summary);
        else process.stdout.write(`reindexed ${plural(total, "source")} in ${summary.seconds.toFixed(1)}s\n`);
      } finally {
        await services.close();
      }
    });
}
