import { ownedRows } from "../db/owned-tables";
import type { Executor } from "../db/store";
import { EXPORT_FORMAT_VERSION, TABLE_BY_TYPE, TABLES, toRecord } from "./tables";

/**
 * Everything a user has, as JSON Lines: a header, then one line per stored row
 * (profile, workspaces and their artifacts such as the notebook registry, memories,
 * documents, their index view entries, chat threads, messages, files and their text
 * blocks), each table in stored order; with `fileBytes`, then the bytes of each file. The output holds no export time, so exporting the same data twice gives the
 * same bytes.
 *
 * @example for await (const line of exportLines(store.db, "alice")) out.write(line + "\n");
 */
export async function* exportLines(
  tx: Executor,
  userId: string,
  counts: Record<string, number> = {},
  options: { fileBytes?: (blobId: string, size: number) => AsyncIterable<Uint8Array> } = {},
): AsyncGenerator<string> {
  yield JSON.stringify({ type: "header", format: "mnemo-export", version: EXPORT_FORMAT_VERSION, userId });
  for (const spec of TABLES) {
    for await (const row of ownedRows(tx, spec, userId)) {
      counts[spec.type] = (counts[spec.type] ?? 0) + 1;
      yield JSON.stringify(toRecord(spec, row));
    }
  }
  if (!options.fileBytes) return;
  // `--with-files`: each file's bytes as base64 parts of at most a blob row (1 MB), after every row.
  for await (const row of ownedRows(tx, TABLE_BY_TYPE.get("file")!, userId)) {
    if (!row.blob_id) continue;
    let part = 0;
    for await (const chunk of options.fileBytes(String(row.blob_id), Number(row.size))) {
      yield JSON.stringify({
        type: "file_data",
        key: row.key,
        part: part++,
        data: Buffer.from(chunk).toString("base64"),
      });
    }
    counts.file_data = (counts.file_data ?? 0) + 1;
  }
}
