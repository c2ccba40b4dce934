/**
 * The version of the index's layout (tables, columns, analyzer, term statistics). Bump it
 * when the layout changes: the index writer then rebuilds the index from the store of
 * record. Its own module, free of LanceDB, so `mnemo doctor` can read it without loading
 * the native engine.
 */
export const INDEX_SCHEMA_VERSION = "7";
