import { createHash } from "node:crypto";
import { looksEncrypted } from "../crypto/stored-text";
import type { Executor } from "../db/store";
import { normaliseMemoryText } from "./content-key";
import { createMemoryScanRepository } from "./scan-repository";

/** Memories of one user and workspace that say the same thing in different words (`mnemo doctor`). */
export interface NearDuplicateGroup {
  ownerId: string;
  workspaceId: string | null;
  ids: string[];
}

/**
 * The words of a text as the near-duplicate check compares them: normalised as for exact
 * duplicates, then letters and digits only, each word once, in sorted order. "I like tea,
 * and coffee." and "i like coffee and tea" agree; a different word does not.
 */
export function nearDuplicateKey(content: string): string {
  const words = normaliseMemoryText(content).match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].sort().join(" ");
}

/**
 * Groups of near-duplicate memories over every user, read a page at a time (no long
 * transaction); exact duplicates stored before the exact-duplicate rule are among them.
 * Client-encrypted memories are skipped. At most `maxGroups` groups are kept.
 */
export async function findNearDuplicates(
  tx: Executor,
  maxGroups = 1_000,
): Promise<{ groups: NearDuplicateGroup[]; total: number; scanned: number }> {
  const seen = new Map<string, string[]>();
  let after = 0;
  let scanned = 0;
  const scan = createMemoryScanRepository();
  for (;;) {
    const rows = await scan.page(tx, after, 1000);
    for (const r of rows) {
      scanned++;
      if (looksEncrypted(r.content)) continue;
      const words = nearDuplicateKey(r.content);
      if (!words) continue;
      const key = createHash("sha1")
        .update(`${r.ownerId}\u001f${r.workspaceId ?? ""}\u001f${words}`)
        .digest("base64");
      const ids = seen.get(key);
      if (ids) ids.push(`${r.ownerId}\u001f${r.workspaceId ?? ""}\u001f${r.id}`);
      else seen.set(key, [`${r.ownerId}\u001f${r.workspaceId ?? ""}\u001f${r.id}`]);
    }
    if (rows.length < 1000) break;
    after = rows[rows.length - 1].seq;
  }
  const groups: NearDuplicateGroup[] = [];
  let total = 0;
  for (const members of seen.values()) {
    if (members.length < 2) continue;
    total++;
    if (groups.length >= maxGroups) continue;
    const [ownerId, workspaceId] = members[0].split("\u001f");
    groups.push({ ownerId, workspaceId: workspaceId || null, ids: members.map((m) => m.split("\u001f")[2]) });
  }
  return { groups, total, scanned };
}
