import type { Executor } from "../db/store";
import { decryptString, isCiphertextString, isEnvelope } from "./aes-gcm";
import type { SealBinding } from "./binding";
import type { SealedFieldSource } from "./sealed-fields";

/** Rows read per query, and in all: past the cap the counts are lower bounds (`complete: false`). */
const PAGE = 500;
const MAX_ROWS = 20_000;
const MAX_DEPTH = 64;

/** Records of a user holding at least one value that `key` opens. */
export interface KeyUsage {
  documents: number;
  chatMessages: number;
  notebookRegistries: number;
  /** False when the scan stopped at its row cap: the counts are then "at least". */
  complete: boolean;
}

/** Whether any encrypted value inside `value` opens under `key` (bound ones with `binding`). */
function opensAny(value: unknown, key: Buffer, binding: SealBinding | null, depth = 0): boolean {
  if (depth > MAX_DEPTH) return false;
  if (typeof value === "string") {
    if (!isCiphertextString(value)) return false;
    try {
      decryptString(value, key, binding);
      return true;
    } catch {
      return false;
    }
  }
  if (isEnvelope(value)) return opensAny(value.ciphertext, key, binding, depth + 1);
  // Nested values are the client's own (unbound): the binding belongs to the field as a whole.
  if (Array.isArray(value)) return value.some((item) => opensAny(item, key, null, depth + 1));
  if (typeof value === "object" && value !== null)
    return Object.values(value).some((item) => opensAny(item, key, null, depth + 1));
  return false;
}

/** Where the records that may hold sealed values live: each domain gives its own (compose.ts wires them). */
export interface KeyUsageSources {
  documents: SealedFieldSource;
  chatMessages: SealedFieldSource;
  notebookRegistries: SealedFieldSource;
}

/**
 * How many of a user's records hold values sealed with `key` (by the server, or by a
 * client with the same key): what escrow would stop opening if that key were replaced.
 * Trial decryption of the user's documents, chat messages and notebook registries, in
 * keyset pages, at most 20,000 rows. File bytes are not counted.
 */
export function createKeyUsage(sources: KeyUsageSources) {
  return {
    async countSealedWith(tx: Executor, ownerId: string, key: Buffer): Promise<KeyUsage> {
      const usage: KeyUsage = { documents: 0, chatMessages: 0, notebookRegistries: 0, complete: true };
      let budget = MAX_ROWS;
      for (const kind of ["documents", "chatMessages", "notebookRegistries"] as const) {
        for (let after: string | null = null; budget > 0; ) {
          const { records, last } = await sources[kind].page(tx, ownerId, after, Math.min(PAGE, budget));
          for (const fields of records)
            if (fields.some((field) => opensAny(field.value, key, field.binding))) usage[kind]++;
          budget -= records.length;
          if (records.length < PAGE) break;
          after = last;
        }
      }
      usage.complete = budget > 0;
      return usage;
    },
  };
}
export type KeyUsageCounter = ReturnType<typeof createKeyUsage>;

/** "3 documents, 1 chat message and no notebook registry" (with "at least" past the cap). */
export function describeUsage(usage: KeyUsage): string {
  const count = (n: number, one: string, many: string) => `${n === 0 ? "no" : n} ${n === 1 ? one : many}`;
  const parts = [
    count(usage.documents, "document", "documents"),
    count(usage.chatMessages, "chat message", "chat messages"),
    count(usage.notebookRegistries, "notebook registry", "notebook registries"),
  ];
  return `${usage.complete ? "" : "at least "}${parts[0]}, ${parts[1]} and ${parts[2]}`;
}
