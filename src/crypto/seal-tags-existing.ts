import { all, sql, type Executor } from "../db/store";
import { bindingFor } from "./binding";
import type { SealTags } from "./seal-tags";

const PAGE = 500;

const parsed = (text: string | null): unknown => {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/**
 * Tags every stored field that holds ciphertext, as found: run once, when a store gets its
 * tag key (an upgrade from before tags), so that values stored before keep opening. From
 * then on only writes through the server tag a field. Returns how many fields were tagged.
 */
export async function tagExistingFields(tx: Executor, tags: SealTags): Promise<number> {
  let tagged = 0;
  const stamp = async (binding: Parameters<SealTags["stamp"]>[1], value: unknown) => {
    if (value === null || value === undefined) return;
    await tags.stamp(tx, binding, value);
    tagged++;
  };
  for (let after = 0; ; ) {
    const rows = await all<{ seq: number; owner_id: string; id: string; document_payload: string; blocks_payload: string; markdown: string }>(
      tx, sql`SELECT seq, owner_id, id, document_payload, blocks_payload, markdown FROM documents WHERE seq > ${after} ORDER BY seq LIMIT ${PAGE}`,
    );
    for (const row of rows) {
      const bind = bindingFor(row.owner_id, "document", row.id);
      await stamp(bind("documentPayload"), parsed(row.document_payload));
      await stamp(bind("blocksPayload"), parsed(row.blocks_payload));
      await stamp(bind("markdown"), row.markdown);
    }
    if (rows.length < PAGE) break;
    after = rows[rows.length - 1].seq;
  }
  for (let after = 0; ; ) {
    const rows = await all<{ seq: number; owner_id: string; id: string; encrypted_content: string }>(
      tx, sql`SELECT seq, owner_id, id, encrypted_content FROM chat_messages WHERE seq > ${after} AND encrypted_content IS NOT NULL ORDER BY seq LIMIT ${PAGE}`,
    );
    for (const row of rows) await stamp(bindingFor(row.owner_id, "chat-message", row.id)("encryptedContent"), row.encrypted_content);
    if (rows.length < PAGE) break;
    after = rows[rows.length - 1].seq;
  }
  const registries = await all<{ owner_id: string; workspace_id: string; value: string }>(
    tx, sql`SELECT owner_id, workspace_id, value FROM workspace_artifacts WHERE kind = ${"notebooks"}`,
  );
  for (const row of registries) await stamp(bindingFor(row.owner_id, "notebook-registry", row.workspace_id)("ciphertext"), parsed(row.value));
  return tagged;
}
