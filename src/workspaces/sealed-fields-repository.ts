import { bindingFor } from "../crypto/binding";
import { parsedField, type SealedFieldSource } from "../crypto/sealed-fields";
import { all, sql } from "../db/store";

/** A user's notebook registries (one per workspace) as crypto counts what a key sealed, in workspace id order. */
export const registrySealedFields: SealedFieldSource = {
  async page(tx, ownerId, after, limit) {
    const from = after === null ? sql`` : sql`AND workspace_id > ${after}`;
    const rows = await all<{ workspace_id: string; value: string }>(
      tx,
      sql`SELECT workspace_id, value FROM workspace_artifacts WHERE owner_id = ${ownerId} AND kind = ${"notebooks"} ${from} ORDER BY workspace_id LIMIT ${limit}`,
    );
    return {
      records: rows.map((row) => [{ value: parsedField(row.value), binding: bindingFor(ownerId, "notebook-registry", row.workspace_id)("ciphertext") }]),
      last: rows.length ? rows[rows.length - 1].workspace_id : null,
    };
  },
};
