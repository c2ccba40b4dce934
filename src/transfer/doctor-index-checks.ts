import { createSettings, liveLeaseHolder } from "../db/leases";
import type { Store } from "../db/store";
import { INDEX_SCHEMA_VERSION, indexStatus, outboxBacklog, recordedIndexFailure } from "../search";
import { plural, type Check } from "./doctor-check";

// `mnemo doctor`'s checks of the search index, read from the store of record: how far the
// writer is behind, whether one holds the lease, and whether the index has this Mnemo's layout.

const STALE_OUTBOX_MS = 10 * 60_000;

export async function indexChecks(store: Store): Promise<Check[]> {
  const holder = await liveLeaseHolder(store, "indexer");
  const live = holder !== null;
  const { text, vector, oldest, oldestText } = await outboxBacklog(store);
  const ageMs = oldest ? Date.now() - oldest : 0;
  const textAgeMs = oldestText ? Date.now() - oldestText : 0;
  const lag: Check = {
    name: "index lag",
    status: "ok",
    detail: `${plural(text, "change")} waiting for full-text, ${vector} for vectors`,
  };
  if (text + vector > 0) lag.detail += `; oldest ${Math.round(ageMs / 1000)}s`;
  // The same verdict as the writer's `/health`: a failure it recorded, or changes waiting too long.
  const { status, failure } = indexStatus({
    own: null,
    recorded: await recordedIndexFailure(createSettings(), store.db),
    writerId: holder,
    pendingText: text,
    oldestPendingAgeMs: textAgeMs,
  });
  if (failure) {
    Object.assign(lag, {
      status: "fail",
      detail: `${lag.detail}; index writes fail since ${failure.since}: ${failure.reason}`,
      hint: "the writer cannot write the search index (MNEMO_INDEX_URI: permissions, free space, object store); records are kept and indexed once writes succeed",
    });
  } else if (live && status === "behind") {
    Object.assign(lag, { status: "warn", hint: "the index writer is behind; see its log" });
  } else if (!live && text > 0 && textAgeMs > STALE_OUTBOX_MS) {
    Object.assign(lag, {
      status: "fail",
      hint: "no process writes the index: start `mnemo serve` (it drains the queue), or run `mnemo reindex`",
    });
  }
  const writerCheck: Check = live
    ? { name: "index writer", status: "ok", detail: `${holder} (lease live)` }
    : store.dialect === "postgres"
      ? {
          name: "index writer",
          status: text > 0 ? "fail" : "warn",
          detail: "no replica holds the index writer lease",
          hint: "start at least one `mnemo serve` replica on this database",
        }
      : {
          name: "index writer",
          status: "ok",
          detail: "no server running on this data dir (one becomes the writer when it starts)",
        };
  return [lag, writerCheck, await layoutCheck(store)];
}

/**
 * Whether the index has this Mnemo's layout (analyzer, columns, term statistics). An index
 * of an older layout is rebuilt by the index writer when it starts; searches stay complete
 * meanwhile (every source is pending and read from the store), only slower.
 */
async function layoutCheck(store: Store): Promise<Check> {
  const layout = await createSettings().get(store.db, "index_schema");
  if (layout === INDEX_SCHEMA_VERSION) return { name: "index layout", status: "ok", detail: `version ${layout}` };
  return {
    name: "index layout",
    status: "warn",
    detail: layout ? `version ${layout}; this Mnemo writes version ${INDEX_SCHEMA_VERSION}` : "not built yet",
    hint: "the next `mnemo serve` rebuilds the index from the store of record (searches stay complete meanwhile); or run `mnemo reindex` now",
  };
}
