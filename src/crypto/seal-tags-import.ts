import type { Executor } from "../db/store";
import { bindingFor, type SealBinding } from "./binding";
import type { SealTags } from "./seal-tags";

const parsed = (value: unknown): unknown => {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
};

/**
 * The sealed fields of rows an import wrote, with their places: documents' payloads and
 * markdown, chat messages' `encryptedContent`, notebook registries. `column(row, name)`
 * reads a column of a row as written (JSON columns as text).
 */
function fieldsOf(type: string, ownerId: string, column: (name: string) => unknown): Array<[SealBinding, unknown]> {
  if (type === "document") {
    const bind = bindingFor(ownerId, "document", String(column("id")));
    return [
      [bind("documentPayload"), parsed(column("document_payload"))],
      [bind("blocksPayload"), parsed(column("blocks_payload"))],
      [bind("markdown"), column("markdown")],
    ];
  }
  if (type === "chat_message" && column("encrypted_content"))
    return [
      [bindingFor(ownerId, "chat-message", String(column("id")))("encryptedContent"), column("encrypted_content")],
    ];
  if (type === "workspace_artifact" && column("kind") === "notebooks") {
    return [
      [bindingFor(ownerId, "notebook-registry", String(column("workspace_id")))("ciphertext"), parsed(column("value"))],
    ];
  }
  return [];
}

/**
 * Tags the sealed fields of rows an import just wrote for `ownerId` (in the import's `tx`):
 * an export brought in by the operator is the user's own data, stored in its new place.
 */
export async function tagImportedRows(
  tx: Executor,
  tags: SealTags,
  type: string,
  columns: readonly string[],
  ownerId: string,
  rows: readonly unknown[][],
): Promise<void> {
  for (const row of rows) {
    for (const [binding, value] of fieldsOf(type, ownerId, (name) => row[columns.indexOf(name)]))
      await tags.stamp(tx, binding, value);
  }
}
