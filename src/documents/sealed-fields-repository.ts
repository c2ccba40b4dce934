import { bindingFor } from "../crypto/binding";
import { parsedField, type SealedFieldSource } from "../crypto/sealed-fields";
import { all, sql } from "../db/store";

/** Documents as crypto sees what a key sealed: the payloads and the markdown, in insertion order. */
export const documentSealedFields: SealedFieldSource = {
  async page(tx, ownerId, after, limit) {
    const owned = ownerId === null ? sql`` : sql`owner_id = ${ownerId} AND`;
    const rows = await all<{
      seq: number;
      owner_id: string;
      id: string;
      document_payload: string;
      blocks_payload: string;
      markdown: string;
    }>(
      tx,
      sql`SELECT seq, owner_id, id, document_payload, blocks_payload, markdown FROM documents WHERE ${owned} seq > ${Number(after ?? 0)} ORDER BY seq LIMIT ${limit}`,
    );
    return {
      records: rows.map((row) => {
        const bind = bindingFor(row.owner_id, "document", row.id);
        return [
          { value: parsedField(row.document_payload), binding: bind("documentPayload") },
          { value: parsedField(row.blocks_payload), binding: bind("blocksPayload") },
          { value: row.markdown, binding: bind("markdown") },
        ];
      }),
      last: rows.length ? String(rows[rows.length - 1].seq) : null,
    };
  },
};
