import { CliError } from "./output";

/**
 * How the memory commands (`remember`, `recall`, `memories …`) reach a user's memories:
 * always in this process, through the same memories service the API's routes call, on
 * the store of record of the data dir (or of MNEMO_DATABASE_URL), never over HTTP.
 *
 * A running server on the same data dir is not in the way: the store is shared (SQLite
 * in WAL mode, or PostgreSQL), writes go to the store and the outbox in one transaction,
 * and the search index has one writer at a time, whoever holds the index writer lease.
 * `recall` seeks that lease: with no server, this process becomes the writer and on exit
 * indexes what is pending and hands the lease back; with a server, the server indexes and
 * this process reads the index as a replica does. Either way the search includes the
 * user's changes the index does not hold yet (read from the store), without waiting. So
 * each change is indexed once, by whichever process holds the lease, and none is lost.
 */

/** What a failed service call names (a body field), as the command line names it (an option or argument). */
const OPTION_NAMES: Record<string, string> = {
  content: "TEXT",
  query: "QUERY",
  limit: "--limit",
  cursor: "--cursor",
  metadata: "--metadata",
  timestamp: "--timestamp",
  workspaceId: "--workspace",
  workspace_id: "--workspace",
  session_id: "--session",
  sessionId: "--session",
  id: "ID",
  "filters.workspace_id": "--workspace",
  "filters.workspaceId": "--workspace",
};

/** How long `recall`, as the index writer with an embedding model, lets pending vectors be made before answering. */
const RECALL_WAIT_MS = 30_000;

/** A service error (the API's 4xx) as one line naming the option: `--limit: must be an integer between 1 and 1000`. */
export function cliErrorOf(error: unknown): unknown {
  if (!(error instanceof Error) || error.name !== "AppError") return error;
  const match = /^([A-Za-z_.]+): (.*)$/s.exec(error.message);
  const option = match ? OPTION_NAMES[match[1]] : undefined;
  // TypeBox's words for an empty string, in ours.
  const problem = match?.[2].replace(/^expected string length greater or equal to 1$/, "must not be empty");
  return new CliError(option ? `${option}: ${problem}` : error.message);
}

/** Checks a body built from the command line against the API route's own TypeBox schema: the API's limits and messages. */
export async function checkBody<T>(schema: import("@sinclair/typebox").TSchema, body: unknown): Promise<T> {
  const [{ Value }, { ValidationError }, { describeValidation }, { findNul, NUL_PROBLEM }, { badRequest }] =
    await Promise.all([
      import("@sinclair/typebox/value"),
      import("elysia"),
      import("../src/shared/validation"),
      import("../src/lib/nul-text"),
      import("../src/shared/app-error"),
    ]);
  // As the API refuses it at its edge: PostgreSQL text cannot hold U+0000.
  const nulAt = findNul(body);
  if (nulAt !== null) throw cliErrorOf(badRequest(`${nulAt}: ${NUL_PROBLEM}`));
  if (!Value.Check(schema, body))
    throw cliErrorOf(badRequest(describeValidation(new ValidationError("body", schema, body))));
  return body as T;
}

export interface MemoryAccessOptions {
  data?: string;
  /** Opens the embedder and seeks the index writer lease (only `recall` searches). */
  search?: boolean;
}

/** Opens the services on the data dir, runs `use`, and closes them (as the index writer: after indexing what is pending). */
export async function withMemories<T>(
  options: MemoryAccessOptions,
  use: (access: MemoryAccess) => Promise<T>,
): Promise<T> {
  const [{ loadConfig }, { openServices }, { checkDataDir }] = await Promise.all([
    import("../src/config"),
    import("../src/compose"),
    import("./preflight"),
  ]);
  let config: ReturnType<typeof loadConfig>;
  try {
    // Without a search, no embedding model is loaded: nothing here embeds.
    config = loadConfig({
      dataDir: options.data,
      logLevel: "warn",
      ...(options.search ? {} : { embeddings: { provider: "none" as const } }),
    });
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  if (!config.storage.databaseUrl) checkDataDir(config.dataDir);
  const services = await openServices(config, { startIndexer: false });
  try {
    if (options.search) await services.indexer.start();
    const access: MemoryAccess = {
      memories: services.memories,
      capture: services.capture,
      async makeVectors() {
        // Full text needs no wait: a search reads the user's not-yet-indexed memories from the
        // store. As the index writer (no server runs), the embedding model's vectors are made only
        // while this process runs: the user's new memories get theirs before the search, as a
        // running server would have made them meanwhile. Bounded; the embedder being down ends
        // the wait (their other signals still find them).
        if (!services.indexer.isWriter || !services.embedder) return { awaitingVectors: 0 };
        await within(RECALL_WAIT_MS, services.indexer.drain());
        // Vectors that cannot be made (no model, offline) are not a wait: the reason is said
        // instead of a count that would only grow from one recall to the next.
        const outage = await services.indexer.vectorOutage();
        if (outage) return { awaitingVectors: 0, unavailable: outage.outage.reason };
        return { awaitingVectors: (await services.indexer.stats()).pendingVector };
      },
    };
    return await use(access).catch((error) => {
      throw cliErrorOf(error);
    });
  } finally {
    await services.close();
  }
}

/** `work`, or `ms` passed, whichever comes first (the work carries on). */
async function within(ms: number, work: Promise<unknown>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

export interface MemoryAccess {
  memories: import("../src/memories/service").MemoryService;
  /** Extraction jobs of captured conversations (`mnemo memories jobs`); a retried job is run by the server's worker. */
  capture: import("../src/formation/capture").CaptureService;
  /**
   * As the index writer with an embedding model: until the pending vectors are made, at most
   * RECALL_WAIT_MS; `awaitingVectors` changes (anyone's) still wait for theirs (a server that
   * writes the index makes them itself: 0); `unavailable` says why none can be made now.
   */
  makeVectors(): Promise<{ awaitingVectors: number; unavailable?: string }>;
}
