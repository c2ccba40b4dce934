import type { Executor } from "../db/store";
import type { SealBinding } from "./binding";

/** One stored value that may be sealed, and the place it was sealed for (null: the client's own, unbound). */
export interface StoredField {
  value: unknown;
  binding: SealBinding | null;
}

/**
 * How a domain shows crypto its records that may hold sealed values, without crypto
 * knowing its tables: each record as its stored fields, a page at a time.
 */
export interface SealedFieldSource {
  /**
   * Up to `limit` records after `after` (a position this source gave; null first), and the
   * position of the last: the owner's, or every user's when `ownerId` is null.
   */
  page(
    tx: Executor,
    ownerId: string | null,
    after: string | null,
    limit: number,
  ): Promise<{ records: StoredField[][]; last: string | null }>;
}

/** A stored JSON text as the value it holds; text that is not JSON as itself. */
export const parsedField = (text: string | null): unknown => {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};
