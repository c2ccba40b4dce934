import { all, sql, type Executor } from "../db/store";
import { decryptString, isCiphertextString, isEnvelope } from "./aes-gcm";
import { bindingFor, type SealBinding } from "./binding";

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
  if (typeof value === "object" && value !== null) return Object.values(value).some((item) => opensAny(item, key, null, depth + 1));
  return false;
}

const parsed = (text: string | null): unknown => {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/**
 * How many of a user's records hold values sealed with `key` (by the server, or by a
 * client with the same key): what escrow would stop opening if that key were replaced.
 * Trial decryption of the user's documents, chat messages and notebook registries, in
 * keyset pages, at most 20,000 rows. File bytes are not counted.
 */
export async function countSealedWith(db: Executor, ownerId: string, key: Buffer): Promise<KeyUsage> {
  const usage: KeyUsage = { documents: 0, chatMessages: 0, notebookRegistries: 0, complete: true };
  let budget = MAX_ROWS;
  for (let after = 0; budget > 0; ) {
    const rows = await all<{ seq: number; id: string; document_payload: string; blocks_payload: string; markdown: string }>(
      db,
      sql`SELECT seq, id, document_payload, blocks_payload, markdown FROM documents WHERE owner_id = ${ownerId} AND seq > ${after} ORDER BY seq LIMIT ${Math.min(PAGE, budget)}`,
    );
    for (const row of rows) {
      const bind = bindingFor(ownerId, "document", row.id);
      const fields: Array<[unknown, string]> = [[parsed(row.document_payload), "documentPayload"], [parsed(row.blocks_payload), "blocksPayload"], [row.markdown, "markdown"]];
      if (fields.some(([value, field]) => opensAny(value, key, bind(field)))) usage.documents++;
    }
    budget -= rows.length;
    if (rows.length < PAGE) break;
    after = rows[rows.length - 1].seq;
  }
  for (let after = 0; budget > 0; ) {
    const rows = await all<{ seq: number; id: string; content: string; encrypted_content: string | null }>(
      db,
      sql`SELECT seq, id, content, encrypted_content FROM chat_messages WHERE owner_id = ${ownerId} AND seq > ${after} ORDER BY seq LIMIT ${Math.min(PAGE, budget)}`,
    );
    for (const row of rows) {
      if (opensAny(row.encrypted_content, key, bindingFor(ownerId, "chat-message", row.id)("encryptedContent")) || opensAny(row.content, key, null)) usage.chatMessages++;
    }
    budget -= rows.length;
    if (rows.length < PAGE) break;
    after = rows[rows.length - 1].seq;
  }
  if (budget > 0) {
    const registries = await all<{ workspace_id: string; value: string }>(
      db, sql`SELECT workspace_id, value FROM workspace_artifacts WHERE owner_id = ${ownerId} AND kind = ${"notebooks"} LIMIT ${budget}`,
    );
    for (const row of registries) {
      if (opensAny(parsed(row.value), key, bindingFor(ownerId, "notebook-registry", row.workspace_id)("ciphertext"))) usage.notebookRegistries++;
    }
    budget -= registries.length;
  }
  usage.complete = budget > 0;
  return usage;
}

/** "3 documents, 1 chat message and no notebook registry" (with "at least" past the cap). */
export function describeUsage(usage: KeyUsage): string {
  const count = (n: number, one: string, many: string) => `${n === 0 ? "no" : n} ${n === 1 ? one : many}`;
  const parts = [count(usage.documents, "document", "documents"), count(usage.chatMessages, "chat message", "chat messages"), count(usage.notebookRegistries, "notebook registry", "notebook registries")];
  return `${usage.complete ? "" : "at least "}${parts[0]}, ${parts[1]} and ${parts[2]}`;
}
