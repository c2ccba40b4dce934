/** Which engine a store runs on. */
export type StoreDialect = "sqlite" | "postgres";

/** What a statement returned: its rows, and how many rows it changed. */
export interface QueryResult<R> {
  rows: R[];
  affected: number;
}

/**
 * What runs queries: the store itself (one statement, auto-committed) or a transaction
 * handle. Repositories take one as their first argument and never open their own. The
 * text uses `$1…$n` placeholders, which both engines accept.
 */
export interface Executor {
  readonly dialect: StoreDialect;
  execute<R>(text: string, params: unknown[]): Promise<QueryResult<R>>;
}
