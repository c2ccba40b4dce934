import { all, chunks, list, sql, type Executor, type Sql } from "./store";

/**
 * An owner-scoped table as a user's export and import copy it, declared by the domain's
 * repository that owns the table: each row is one stored row, its columns as stored,
 * JSON columns parsed, `seq` left out (an import appends in the exported order, so
 * relative order, and so every list order, is kept).
 */
export interface OwnedTable {
  table: string;
  /** The column that names the owner; rewritten to the importing user. */
  owner: string;
  /** Stored columns, owner first, in export order. */
  columns: string[];
  /** Columns holding JSON text. */
  json?: string[];
  /** Export order (code constant). */
  orderBy: string;
  /** The owner-scoped key of a row: what tells a re-run (the owner has it) from a collision. */
  idColumns: string[];
  /**
   * Stored columns that are not exported, with the value an import gives them: internal
   * pointers that mean nothing in another data dir (a file's blob id).
   */
  hidden?: Record<string, unknown>;
  /**
   * Columns added after exports began, with the value an import gives a record that lacks
   * them (an older export, a memory from a plain-lines file): a new stored column adds itself here.
   */
  defaults?: Record<string, unknown>;
}

/**
 * A table's stored columns in order, each with where a row keeps its value: a field of the
 * row, or a function of it (a flag stored as 0/1). The one list a repository's insert and its
 * `OwnedTable` columns follow, so that a column the insert writes is one the export carries.
 */
export type StoredColumns<Row> = Record<string, keyof Row | ((row: Row) => unknown)>;

/**
 * `(column, …) VALUES (…)` of an insert of `row`: every column of `columns` (or those of
 * `only`), `json` ones serialized, a missing value as NULL.
 */
export function insertOf<Row>(
  columns: StoredColumns<NoInfer<Row>>,
  row: Row,
  { json = [], only }: { json?: readonly string[]; only?: readonly string[] } = {},
): Sql {
  const names = only ?? Object.keys(columns);
  const values = names.map((name) => {
    const from = columns[name];
    const value = typeof from === "function" ? from(row) : row[from];
    return json.includes(name) ? JSON.stringify(value) : (value ?? null);
  });
  return sql`(${sql.raw(names.join(", "))}) VALUES ${list(values)}`;
}

/** Every row of `spec`'s table owned by `ownerId`, in pages (no long-lived cursor). */
export async function* ownedRows(
  tx: Executor,
  spec: OwnedTable,
  ownerId: string,
  page = 1_000,
): AsyncGenerator<Record<string, unknown>> {
  const cols = sql.raw(spec.columns.join(", "));
  const order = sql.raw(spec.orderBy);
  for (let offset = 0; ; offset += page) {
    // Keyset paging needs a per-table key; OFFSET on the owner's index is simple and an export is a one-off.
    const rows = await all<Record<string, unknown>>(
      tx,
      sql`SELECT ${cols} FROM ${sql.table(spec.table)} WHERE ${sql.raw(spec.owner)} = ${ownerId} ORDER BY ${order} LIMIT ${page} OFFSET ${offset}`,
    );
    yield* rows;
    if (rows.length < page) return;
  }
}

/** How one batch of rows went: which were new, which the owner already had, which collide with another owner's (or a unique name). */
export interface InsertOutcome {
  inserted: number[];
  existing: number[];
  conflicting: number[];
}

/**
 * Inserts rows (column values in `spec.columns` order) for `ownerId` in multi-row
 * statements; a row that collides with a stored one is left as it is. A collision is
 * `existing` when the owner already has a row with that id (a re-run), else
 * `conflicting` (an id of another user's, or a taken slug or user name).
 */
export async function insertRows(
  tx: Executor,
  spec: OwnedTable,
  ownerId: string,
  rows: unknown[][],
): Promise<InsertOutcome> {
  const outcome: InsertOutcome = { inserted: [], existing: [], conflicting: [] };
  const perStatement = Math.max(1, Math.floor(4_000 / spec.columns.length));
  // The unit separator joins key columns (PostgreSQL text cannot hold NUL).
  const key = spec.idColumns.join(" || '\u001f' || ");
  const at = spec.idColumns.map((c) => spec.columns.indexOf(c));
  const keyOf = (row: unknown[]) => at.map((j) => String(row[j])).join("\u001f");
  for (let start = 0; start < rows.length; start += perStatement) {
    const chunk = rows.slice(start, start + perStatement);
    const values: Sql[] = chunk.map((row) => sql`(${sql.join(row)})`);
    const returned = await all<{ k: string }>(
      tx,
      sql`INSERT INTO ${sql.table(spec.table)} (${sql.raw(spec.columns.join(", "))}) VALUES ${sql.join(values)}
          ON CONFLICT DO NOTHING RETURNING ${sql.raw(key)} AS k`,
    );
    const fresh = new Set(returned.map((r) => r.k));
    const missed = chunk.flatMap((row, i) => (fresh.has(keyOf(row)) ? [] : [i]));
    const owned = missed.length
      ? await ownedKeys(
          tx,
          spec,
          ownerId,
          missed.map((i) => chunk[i]),
        )
      : new Set<string>();
    chunk.forEach((row, i) => {
      if (fresh.has(keyOf(row))) outcome.inserted.push(start + i);
      else if (owned.has(keyOf(row))) outcome.existing.push(start + i);
      else outcome.conflicting.push(start + i);
    });
  }
  return outcome;
}

/** Keys among `rows` that `ownerId` already has (the key is the owner-scoped primary or unique key). */
async function ownedKeys(tx: Executor, spec: OwnedTable, ownerId: string, rows: unknown[][]): Promise<Set<string>> {
  const first = spec.columns.indexOf(spec.idColumns[0]);
  const key = spec.idColumns.join(" || '\u001f' || ");
  const found = new Set<string>();
  for (const part of chunks([...new Set(rows.map((row) => row[first]))])) {
    const stored = await all<{ k: string }>(
      tx,
      sql`SELECT ${sql.raw(key)} AS k FROM ${sql.table(spec.table)} WHERE ${sql.raw(spec.owner)} = ${ownerId} AND ${sql.raw(spec.idColumns[0])} IN ${list(part)}`,
    );
    for (const r of stored) found.add(r.k);
  }
  return found;
}

/** Which of `ids` (values of the table's first id column) `ownerId` has. */
export async function ownedIds(tx: Executor, spec: OwnedTable, ownerId: string, ids: string[]): Promise<Set<string>> {
  const key = sql.raw(spec.idColumns[0]);
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await all<{ id: string }>(
      tx,
      sql`SELECT ${key} AS id FROM ${sql.table(spec.table)} WHERE ${sql.raw(spec.owner)} = ${ownerId} AND ${key} IN ${list(ids.slice(i, i + 500))}`,
    );
    for (const r of rows) found.add(r.id);
  }
  return found;
}
