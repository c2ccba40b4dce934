import { bindingFor } from "../crypto/binding";
import type { SealedFieldSource } from "../crypto/sealed-fields";
import { all, sql } from "../db/store";

/**
 * Chat messages as crypto sees what a key sealed, in insertion order: the
 * encrypted content (bound to its message), and the content, which a client may have
 * sealed itself (unbound).
 */
export const messageSealedFields: SealedFieldSource = {
  async page(tx, ownerId, after, limit) {
    const owned = ownerId === null ? sql`` : sql`owner_id = ${ownerId} AND`;
    const rows = await all<{
      seq: number;
      owner_id: string;
      id: string;
      content: string;
      encrypted_content: string | null;
    }>(
      tx,
      sql`SELECT seq, owner_id, id, content, encrypted_content FROM chat_messages WHERE ${owned} seq > ${Number(after ?? 0)} ORDER BY seq LIMIT ${limit}`,
    );
    return {
      records: rows.map((row) => [
        { value: row.encrypted_content, binding: bindingFor(row.owner_id, "chat-message", row.id)("encryptedContent") },
        { value: row.content, binding: null },
      ]),
      last: rows.length ? String(rows[rows.length - 1].seq) : null,
    };
  },
};
