import { createHash } from "node:crypto";
import type { SearchKind } from "../types";

/**
 * The index is partitioned by owner: every owner's items live in tables of their own, so
 * full-text statistics (document frequencies, lengths), result lists and search cost
 * depend on that owner's data alone, and no filter on owner runs at search time.
 * Within an owner, memories and workspace content (document blocks, chat messages,
 * files) are separate groups: a memory search reads no document rows, and the reverse.
 */
export type PartitionGroup = "mem" | "doc";

export const partitionGroup = (kind: SearchKind): PartitionGroup => (kind === "memory" ? "mem" : "doc");

/** The kinds each group holds: a search over all of them needs no kind filter. */
export const GROUP_KINDS: Record<PartitionGroup, SearchKind[]> = { mem: ["memory"], doc: ["block", "message", "file"] };

const hashes = new Map<string, string>();
/** A fixed-length name part per owner: any owner id (any characters, any length) maps to a valid table name. */
function ownerPart(ownerId: string): string {
  let hash = hashes.get(ownerId);
  if (!hash) {
    hash = createHash("sha256").update(ownerId).digest("hex").slice(0, 32);
    if (hashes.size > 10_000) hashes.clear();
    hashes.set(ownerId, hash);
  }
  return hash;
}

/** What every table of a group's name begins with. */
const groupPrefix = (group: PartitionGroup) => `${group}_`;
/** The owner's full-text table of a group. */
export const textTable = (ownerId: string, group: PartitionGroup) => `${groupPrefix(group)}${ownerPart(ownerId)}`;

const VECTOR_MARK = "__v_";
/** The owner's vector table of a group in one vector space (model and dimension). */
export const vectorTable = (ownerId: string, group: PartitionGroup, spaceId: string, dimension: number) =>
  `${textTable(ownerId, group)}${VECTOR_MARK}${spaceId.toLowerCase().replace(/[^a-z0-9]+/g, "_")}_${dimension}`;

export const isVectorTable = (name: string) => name.includes(VECTOR_MARK);

/** Whether a table holds memories: an owner's full-text table of the memory group or one of its vector tables. */
export const isMemoryTable = (name: string) => name.startsWith(groupPrefix("mem"));
