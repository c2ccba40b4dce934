import { bindingFor } from "../crypto/binding";
import { parsedField, type SealedFieldSource } from "../crypto/sealed-fields";
import { all, sql } from "../db/store";

/** Notebook registries (one per workspace) as crypto sees what a key sealed, in workspace id order (ids are unique across users). */
export const registrySealedFields: SealedFieldSource = {
  async page(tx, ownerId, after, limit) {
    const owned = ownerId === null ? sql`` : sql`AND owner_id = ${ownerId}`;
    const from = after === null ? sql`` : sql`AND workspace_id > ${after}`;
    const rows = await all<{ owner_id: string; workspace_id: string; value: string }>(
      tx,
      sql`SELECT owner_id, workspace_id, value FROM workspace_artifacts WHERE kind = ${"notebooks"} ${owned} ${from} ORDER BY workspace_id LIMIT ${limit}`,
    );
    return {
      records: rows.map((row) => [
        {
          value: parsedField(row.value),
          binding: bindingFor(row.owner_id, "notebook-registry", row.workspace_id)("ciphertext"),
        },
      ]),
      last: rows.length ? rows[rows.length - 1].workspace_id : null,
    };
  },
};
