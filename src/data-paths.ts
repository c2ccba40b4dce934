import { join } from "node:path";

/** Where things live inside the data dir (documented in the README). */
export const dataPaths = (dataDir: string) => ({
  /** The store of record: every record, key, token, profile and the outbox. */
  sqlite: join(dataDir, "mnemo.sqlite"),
  /** The derived search index (LanceDB); `mnemo reindex` rebuilds it from SQLite. */
  lance: join(dataDir, "index"),
  /** Local embedding models, unless MNEMO_MODELS_DIR says otherwise. */
  models: join(dataDir, "models"),
});
