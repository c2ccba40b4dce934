import { bindingFor } from "../crypto/binding";
import type { SealedFieldSource } from "../crypto/sealed-fields";
import { all, sql } from "../db/store";

/**
 * A user's chat messages as crypto counts what a key sealed, in insertion order: the
 * encrypted content (bound to its message), and the content, which a client may have
 * sealed itself (unbound).
 */
export const messageSealedFields: SealedFieldSource = {
  async page(tx, ownerId, after, limit) {
    const rows = await all<{ seq: number; id: string; content: string; encrypted_content: string | null }>(
      tx,
      sql`SELECT seq, id, content, encrypted_content FROM chat_messages WHERE owner_id = ${ownerId} AND seq > ${Number(after ?? 0)} ORDER BY seq LIMIT ${limit}`,
    );
    return {
      records: rows.map((row) => [
        { value: row.encrypted_content, binding: bindingFor(ownerId, "chat-message", row.id)("encryptedContent") },
        { value: row.content, binding: null },
      ]),
      last: rows.length ? String(rows[rows.length - 1].seq) : null,
    };
  },
};
