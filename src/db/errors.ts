import { badRequest } from "../shared/app-error";

/**
 * Errors of the store of record, the same whichever engine is underneath: repositories
 * and services catch these types, never an engine's message text or code.
 */
export class ConstraintError extends Error {
  constructor(
    readonly constraint: "unique" | "foreign_key" | "not_null" | "check",
    message: string,
  ) {
    super(message);
    this.name = "ConstraintError";
  }
}

/** The store cannot be reached (PostgreSQL restarting, connection refused): worth retrying later. */
export class StoreUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreUnavailableError";
  }
}

/** The store of record cannot be opened (a damaged file, a read-only dir): said in one line naming the file. */
export class StoreOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreOpenError";
  }
}

/** The store's disk is full (SQLITE_FULL, PostgreSQL disk_full): nothing was written; retry once space is freed. */
export class StoreFullError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreFullError";
  }
}

/** The engine gave up on a transaction because of a concurrent one; running it again is safe. */
export class TransactionConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TransactionConflictError";
  }
}

const SQLITE_CONSTRAINTS: Record<string, ConstraintError["constraint"]> = {
  SQLITE_CONSTRAINT_UNIQUE: "unique",
  SQLITE_CONSTRAINT_PRIMARYKEY: "unique",
  SQLITE_CONSTRAINT_FOREIGNKEY: "foreign_key",
  SQLITE_CONSTRAINT_NOTNULL: "not_null",
  SQLITE_CONSTRAINT_CHECK: "check",
};
const POSTGRES_CONSTRAINTS: Record<string, ConstraintError["constraint"]> = {
  "23505": "unique",
  "23503": "foreign_key",
  "23502": "not_null",
  "23514": "check",
};
/** Node socket errors and PostgreSQL's "shutting down / cannot connect now" classes. */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "57P01",
  "57P02",
  "57P03",
  "53300",
]);

/** Maps an engine error onto the store's error types; anything else passes unchanged. */
export function translateError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const code = String((error as { code?: unknown }).code ?? "");
  const constraint = SQLITE_CONSTRAINTS[code] ?? POSTGRES_CONSTRAINTS[code];
  if (constraint) return new ConstraintError(constraint, error.message);
  if (code === "40001" || code === "40P01") return new TransactionConflictError(error.message);
  if (code === "SQLITE_FULL" || code === "53100" || /database or disk is full/i.test(error.message))
    return new StoreFullError(error.message);
  // PostgreSQL text cannot hold U+0000: request guards refuse it first (lib/nul-text.ts); this is the safety net.
  if (code === "22021" || (code === "22P05" && /0x00|\\u0000/.test(error.message))) {
    return badRequest(
      "a text value (an id, a field or a parameter) contains the NUL character U+0000, which this store cannot keep",
    );
  }
  // "timeout exceeded when trying to connect": pg-pool gave up waiting for a free connection (every one busy for 5 s).
  if (
    UNAVAILABLE_CODES.has(code) ||
    code.startsWith("08") ||
    /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
      error.message,
    )
  ) {
    return new StoreUnavailableError(error.message);
  }
  return error;
}
