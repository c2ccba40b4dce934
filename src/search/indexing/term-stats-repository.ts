import { all, chunks, list, run, sql, type Executor } from "../../db/store";
import {
  decodeField,
  decodeVector,
  encodeContext,
  encodeField,
  encodeVector,
  type ItemTerms,
  storedTerms,
  type StoredForward,
} from "../analysis/item-terms";
import { GROUP_KINDS, partitionGroup, type PartitionGroup } from "../lance/partitions";
import type { AnyItem, SearchKind, SourceRef } from "../types";

/**
 * Each owner's full-text statistics, kept in the store of record: per item its analysed
 * terms (a forward row), per owner and partition group the number of items holding each
 * term and the items' count and total length. A write analyses what it changed once, in
 * its own transaction (`refresh`, called by the outbox as the change is recorded), so at
 * every moment they describe exactly the owner's current items, however far the index
 * writer has got: a search scores every candidate with them, never with LanceDB's own
 * statistics, and never analyses an item itself. This is their storage; term-stats.ts the
 * analysis a write does.
 */
export interface OwnStatistics {
  /** `version` moves on with every change to the group's items (0: the owner never wrote it). */
  corpus: Map<PartitionGroup, { items: number; length: number; version: number }>;
  /** Items holding each asked term, per group. */
  df: Map<PartitionGroup, Map<string, number>>;
}

/** A forward row of a source with a change the index does not reflect yet (`itemId` null: the source has no items now). */
export interface PendingRow {
  seq: number;
  kind: SearchKind;
  sourceId: string;
  itemId: string | null;
  terms: ItemTerms | null;
}

/** Key of one item among an owner's: `kind|sourceId|itemId`. */
export const itemKey = (item: { kind: string; sourceId: string; itemId: string }) =>
  `${item.kind}|${item.sourceId}|${item.itemId}`;

type Delta = { ownerId: string; group: PartitionGroup; n: number };

/** An owner's stored forward rows of some sources of one kind (and of some of their items, with `itemIds`). */
async function storedRows(
  db: Executor,
  ownerId: string,
  kind: SearchKind,
  sourceIds: string[],
  itemIds: string[] | null = null,
): Promise<Array<{ sourceId: string; itemId: string; stored: StoredForward }>> {
  const items = itemIds ? sql`AND item_id IN ${list(itemIds)}` : sql``;
  const rows = await all<{
    source_id: string;
    item_id: string;
    terms: string;
    context: string;
    wvec: Uint8Array | string;
    created_at: number;
  }>(
    db,
    sql`SELECT source_id, item_id, terms, context, wvec, created_at FROM search_terms
        WHERE owner_id = ${ownerId} AND kind = ${kind} AND source_id IN ${list(sourceIds)} ${items}`,
  );
  return rows.map((row) => ({
    sourceId: row.source_id,
    itemId: row.item_id,
    stored: { terms: row.terms, context: row.context, vector: decodeVector(row.wvec), at: Number(row.created_at) },
  }));
}

export function createTermStatsRepository() {
  /** Replaces what the statistics count for these sources with their current `items` (none: deleted). */
  async function replace(
    tx: Executor,
    refs: SourceRef[],
    items: Array<{ item: AnyItem; terms: ItemTerms }>,
  ): Promise<void> {
    const corpus = new Map<string, Delta & { length: number }>();
    const df = new Map<string, Delta & { term: string }>();
    const add = (ownerId: string, group: PartitionGroup, length: number, terms: Iterable<string>, sign: 1 | -1) => {
      const key = `${ownerId}\u0000${group}`;
      const c = corpus.get(key) ?? corpus.set(key, { ownerId, group, n: 0, length: 0 }).get(key)!;
      c.n += sign;
      c.length += sign * length;
      for (const term of terms) {
        const termKey = `${key}\u0000${term}`;
        const d = df.get(termKey) ?? df.set(termKey, { ownerId, group, term, n: 0 }).get(termKey)!;
        d.n += sign;
      }
    };
    for (const [ownerId, kind, sourceIds] of byOwnerAndKind(refs)) {
      for (const ids of chunks(sourceIds, 200)) {
        const old = await all<{ grp: PartitionGroup; terms: string }>(
          tx,
          sql`SELECT grp, terms FROM search_terms WHERE owner_id = ${ownerId} AND kind = ${kind} AND source_id IN ${list(ids)}`,
        );
        for (const row of old) {
          const text = decodeField(row.terms)!;
          add(ownerId, row.grp, text.length, text.counts.keys(), -1);
        }
        if (old.length)
          await run(
            tx,
            sql`DELETE FROM search_terms WHERE owner_id = ${ownerId} AND kind = ${kind} AND source_id IN ${list(ids)}`,
          );
      }
    }
    const rows = items.map(({ item, terms }) => {
      const group = partitionGroup(item.kind);
      add(item.ownerId, group, terms.text.length, terms.text.counts.keys(), 1);
      return sql`(${item.ownerId}, ${item.kind}, ${item.sourceId}, ${item.itemId}, ${group}, ${encodeField(terms.text)}, ${encodeContext(terms)}, ${encodeVector(terms.vector)}, ${terms.at})`;
    });
    for (const chunk of chunks(rows, 100)) {
      await run(
        tx,
        sql`INSERT INTO search_terms (owner_id, kind, source_id, item_id, grp, terms, context, wvec, created_at) VALUES ${sql.join(chunk)}`,
      );
    }
    const corpusRows = [...corpus.values()]
      .filter((c) => c.n !== 0 || c.length !== 0)
      .map((c) => sql`(${c.ownerId}, ${c.group}, ${c.n}, ${c.length})`);
    for (const chunk of chunks(corpusRows, 200)) {
      await run(
        tx,
        sql`INSERT INTO search_corpus (owner_id, grp, items, length) VALUES ${sql.join(chunk)}
                          ON CONFLICT (owner_id, grp) DO UPDATE SET items = search_corpus.items + excluded.items, length = search_corpus.length + excluded.length`,
      );
    }
    const dfRows = [...df.values()]
      .filter((d) => d.n !== 0)
      .map((d) => sql`(${d.ownerId}, ${d.group}, ${d.term}, ${d.n})`);
    for (const chunk of chunks(dfRows, 200)) {
      await run(
        tx,
        sql`INSERT INTO search_df (owner_id, grp, term, df) VALUES ${sql.join(chunk)}
                          ON CONFLICT (owner_id, grp, term) DO UPDATE SET df = search_df.df + excluded.df`,
      );
    }
    // A term no item holds any more goes: a deleted item's words stay in no row.
    for (const [ownerId, group, terms] of byOwnerAndGroup([...df.values()].filter((d) => d.n < 0))) {
      for (const chunk of chunks(terms, 200)) {
        await run(
          tx,
          sql`DELETE FROM search_df WHERE owner_id = ${ownerId} AND grp = ${group} AND term IN ${list(chunk)} AND df <= 0`,
        );
      }
    }
  }

  return {
    /** `replace`, as a method. */
    replace,

    /**
     * Locks the owners' statistics rows of the groups of these sources (creating them),
     * inside `tx`: concurrent writes of one owner then count in commit order, and the outbox
     * rows recorded after this get their seqs in commit order too (what `pendingSince` relies on).
     */
    async lockOwners(tx: Executor, refs: SourceRef[]): Promise<void> {
      const groups = [...new Set(refs.map((ref) => `${ref.ownerId}\u0000${partitionGroup(ref.kind)}`))].sort();
      for (const chunk of chunks(groups, 200)) {
        const rows = chunk.map((key) => {
          const [ownerId, group] = key.split("\u0000");
          return sql`(${ownerId}, ${group}, 0, 0, 1)`;
        });
        await run(
          tx,
          sql`INSERT INTO search_corpus (owner_id, grp, items, length, version) VALUES ${sql.join(rows)}
              ON CONFLICT (owner_id, grp) DO UPDATE SET version = search_corpus.version + 1`,
        );
      }
    },

    /** Forgets everything (a rebuild re-enqueues every source, which counts them again). */
    async clear(tx: Executor): Promise<void> {
      await run(tx, sql`DELETE FROM search_terms`);
      await run(tx, sql`DELETE FROM search_df`);
      // Kept, with their versions moved on: a search's reuse of what it read must not match a new count.
      await run(tx, sql`UPDATE search_corpus SET items = 0, length = 0, version = version + 1`);
    },

    /** One owner's statistics for the asked terms and groups, in one statement. */
    async statistics(db: Executor, ownerId: string, groups: PartitionGroup[], terms: string[]): Promise<OwnStatistics> {
      const termBranch = terms.length
        ? sql`UNION ALL SELECT 'd' AS t, grp AS a, term AS b, df AS n, 0 AS m, 0 AS v FROM search_df
                WHERE owner_id = ${ownerId} AND grp IN ${list(groups)} AND term IN ${list(terms)}`
        : sql``;
      const rows = await all<{ t: "c" | "d"; a: string; b: string; n: number; m: number; v: number }>(
        db,
        sql`SELECT 'c' AS t, grp AS a, '' AS b, items AS n, length AS m, version AS v FROM search_corpus
              WHERE owner_id = ${ownerId} AND grp IN ${list(groups)}
            ${termBranch}`,
      );
      const stats: OwnStatistics = { corpus: new Map(), df: new Map() };
      for (const row of rows) {
        const group = row.a as PartitionGroup;
        if (row.t === "c")
          stats.corpus.set(group, { items: Number(row.n), length: Number(row.m), version: Number(row.v) });
        else (stats.df.get(group) ?? stats.df.set(group, new Map()).get(group)!).set(row.b, Number(row.n));
      }
      return stats;
    },

    /**
     * The forward rows of an owner's sources (of one group's kinds) with text-stage outbox
     * rows after `afterSeq`, each source once with its newest seq, and the owner's oldest
     * pending seq of those kinds (null: none pending): what the index does not reflect yet,
     * read as a difference, so a search's cost follows what changed since it last looked.
     */
    async pendingSince(
      db: Executor,
      ownerId: string,
      group: PartitionGroup,
      afterSeq: number,
    ): Promise<{ rows: PendingRow[]; oldest: number | null }> {
      const kinds = GROUP_KINDS[group];
      // One statement: the rows since `afterSeq`, then one row (kind null) with the oldest pending
      // seq, read in seq order from the index's start (MIN() with the kinds' filter would read every row).
      const read = await all<{
        seq: number | null;
        kind: SearchKind | null;
        source_id: string | null;
        item_id: string | null;
        terms: string | null;
        context: string | null;
        wvec: Uint8Array | string | null;
        created_at: number | null;
      }>(
        db,
        sql`SELECT o.seq, o.kind, o.source_id, s.item_id, s.terms, s.context, s.wvec, s.created_at
            FROM (SELECT kind, source_id, MAX(seq) AS seq FROM outbox
                  WHERE owner_id = ${ownerId} AND stage = 'text' AND seq > ${afterSeq} AND kind IN ${list(kinds)}
                  GROUP BY kind, source_id) o
            LEFT JOIN search_terms s ON s.owner_id = ${ownerId} AND s.kind = o.kind AND s.source_id = o.source_id
            UNION ALL
            SELECT (SELECT seq FROM outbox WHERE owner_id = ${ownerId} AND stage = 'text' AND kind IN ${list(kinds)}
                    ORDER BY seq LIMIT 1), NULL, NULL, NULL, NULL, NULL, NULL, NULL`,
      );
      const oldest = read.find((row) => row.kind === null)?.seq ?? null;
      const rows = read.filter(
        (row): row is typeof row & { seq: number; kind: SearchKind; source_id: string } => row.kind !== null,
      );
      return {
        rows: rows.map((row) => ({
          seq: Number(row.seq),
          kind: row.kind,
          sourceId: row.source_id,
          itemId: row.item_id,
          terms:
            row.item_id === null
              ? null
              : storedTerms({
                  terms: row.terms ?? "",
                  context: row.context ?? "",
                  vector: decodeVector(row.wvec ?? ""),
                  at: Number(row.created_at),
                }),
        })),
        oldest: oldest === null ? null : Number(oldest),
      };
    },

    /**
     * The current forward rows of some of an owner's sources (`kind|sourceId`), as pending
     * rows of seq 0; a source without items (deleted) comes back as one row without an item.
     */
    async sourceRows(db: Executor, ownerId: string, sources: string[]): Promise<PendingRow[]> {
      const out: PendingRow[] = [];
      const byKind = new Map<SearchKind, string[]>();
      for (const source of sources) {
        const split = source.indexOf("|");
        const kind = source.slice(0, split) as SearchKind;
        (byKind.get(kind) ?? byKind.set(kind, []).get(kind)!).push(source.slice(split + 1));
      }
      for (const [kind, sourceIds] of byKind) {
        for (const ids of chunks([...new Set(sourceIds)], 200)) {
          const found = new Set<string>();
          for (const row of await storedRows(db, ownerId, kind, ids)) {
            found.add(row.sourceId);
            out.push({ seq: 0, kind, sourceId: row.sourceId, itemId: row.itemId, terms: storedTerms(row.stored) });
          }
          for (const id of ids) if (!found.has(id)) out.push({ seq: 0, kind, sourceId: id, itemId: null, terms: null });
        }
      }
      return out;
    },

    /** The stored word vectors of some sources' items (the index writer's LanceDB rows take them), by owner-qualified item key. */
    async wordVectors(db: Executor, refs: SourceRef[]): Promise<Map<string, Int8Array | null>> {
      const out = new Map<string, Int8Array | null>();
      for (const [ownerId, kind, sourceIds] of byOwnerAndKind(refs)) {
        for (const ids of chunks(sourceIds, 200)) {
          const rows = await all<{ source_id: string; item_id: string; wvec: Uint8Array | string }>(
            db,
            sql`SELECT source_id, item_id, wvec FROM search_terms WHERE owner_id = ${ownerId} AND kind = ${kind} AND source_id IN ${list(ids)}`,
          );
          for (const row of rows)
            out.set(
              `${ownerId}\u0000${itemKey({ kind, sourceId: row.source_id, itemId: row.item_id })}`,
              decodeVector(row.wvec),
            );
        }
      }
      return out;
    },

    /** The stored forward rows of some of an owner's items, by `itemKey` (an item not found is gone). */
    async forwardRows(
      db: Executor,
      ownerId: string,
      items: Array<{ kind: SearchKind; sourceId: string; itemId: string }>,
    ): Promise<Map<string, StoredForward>> {
      const out = new Map<string, StoredForward>();
      const byKind = new Map<SearchKind, typeof items>();
      for (const item of items) (byKind.get(item.kind) ?? byKind.set(item.kind, []).get(item.kind)!).push(item);
      for (const [kind, ofKind] of byKind) {
        for (const chunk of chunks(ofKind, 200)) {
          const sourceIds = [...new Set(chunk.map((i) => i.sourceId))];
          // A memory is one item: its source id says it all.
          const itemIds = kind === "memory" ? null : [...new Set(chunk.map((i) => i.itemId))];
          for (const row of await storedRows(db, ownerId, kind, sourceIds, itemIds))
            out.set(itemKey({ kind, sourceId: row.sourceId, itemId: row.itemId }), row.stored);
        }
      }
      return out;
    },
  };
}

export type TermStatsRepository = ReturnType<typeof createTermStatsRepository>;

/** Terms by owner and partition group, for one statement per group. */
function byOwnerAndGroup(deltas: Array<Delta & { term: string }>): Array<[string, PartitionGroup, string[]]> {
  const groups = new Map<string, [string, PartitionGroup, string[]]>();
  for (const d of deltas) {
    const key = `${d.ownerId}\u0000${d.group}`;
    (groups.get(key) ?? groups.set(key, [d.ownerId, d.group, []]).get(key)!)[2].push(d.term);
  }
  return [...groups.values()];
}

function byOwnerAndKind(refs: SourceRef[]): Array<[string, SearchKind, string[]]> {
  const groups = new Map<string, [string, SearchKind, string[]]>();
  for (const ref of refs) {
    const key = `${ref.ownerId}\u0000${ref.kind}`;
    (groups.get(key) ?? groups.set(key, [ref.ownerId, ref.kind, []]).get(key)!)[2].push(ref.sourceId);
  }
  return [...groups.values()];
}
