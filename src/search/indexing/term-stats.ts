import { all, chunks, list, run, sql, type Executor } from "../../db/store";
import {
  decodeContext,
  decodeField,
  decodeVector,
  encodeContext,
  encodeField,
  encodeVector,
  type FieldTerms,
  type ItemTerms,
} from "../analysis/item-terms";
import { GROUP_KINDS, partitionGroup, type PartitionGroup } from "../lance/partitions";
import type { AnyItem, SearchKind, SourceRef } from "../types";

/**
 * Each owner's full-text statistics, kept in the store of record beside the outbox:
 * per item its analysed terms (a forward row), per owner and partition group the number
 * of items holding each term and the items' count and total length. The index writer
 * changes them in the same transaction that takes a batch off the outbox, so at every
 * moment they describe exactly the items of the sources that are not pending; a search
 * corrects them for the pending ones (query/own-state.ts) and scores every candidate
 * with the result, whatever LanceDB's own statistics are at that moment.
 */
export interface OwnSnapshot {
  /** The owner's sources with text-stage changes the index does not reflect yet. */
  pending: SourceRef[];
  corpus: Map<PartitionGroup, { items: number; length: number }>;
  /** Items holding each asked term, per group. */
  df: Map<PartitionGroup, Map<string, number>>;
  /** What the statistics count for the pending sources' items (to be replaced by their current items). */
  stale: Array<{ group: PartitionGroup; text: FieldTerms }>;
}

/** Key of one item among an owner's: `kind|sourceId|itemId`. */
export const itemKey = (item: { kind: string; sourceId: string; itemId: string }) =>
  `${item.kind}|${item.sourceId}|${item.itemId}`;

type Delta = { ownerId: string; group: PartitionGroup; n: number };

export function createTermStats() {
  return {
    /**
     * Replaces what the statistics count for these sources with their current `items`
     * (none: deleted), inside the transaction that takes them off the outbox.
     */
    async replace(tx: Executor, refs: SourceRef[], items: Array<{ item: AnyItem; terms: ItemTerms }>): Promise<void> {
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
    },

    /** Forgets everything (a rebuild re-enqueues every source, which counts them again). */
    async clear(tx: Executor): Promise<void> {
      await run(tx, sql`DELETE FROM search_terms`);
      await run(tx, sql`DELETE FROM search_df`);
      await run(tx, sql`DELETE FROM search_corpus`);
    },

    /**
     * One owner's statistics for the asked terms and groups, with the pending sources and
     * what the statistics count for them, read in ONE statement: one consistent moment of
     * the store, so a batch the writer commits meanwhile is either wholly in it or not.
     */
    async snapshot(db: Executor, ownerId: string, groups: PartitionGroup[], terms: string[]): Promise<OwnSnapshot> {
      const kinds = groups.flatMap((group) => GROUP_KINDS[group]);
      const termBranch = terms.length
        ? sql`UNION ALL SELECT 'd' AS t, grp AS a, term AS b, df AS n, 0 AS m, '' AS c FROM search_df
                WHERE owner_id = ${ownerId} AND grp IN ${list(groups)} AND term IN ${list(terms)}`
        : sql``;
      const rows = await all<{ t: "p" | "c" | "d" | "f"; a: string; b: string; n: number; m: number; c: string }>(
        db,
        sql`SELECT 'f' AS t, s.grp AS a, '' AS b, 0 AS n, 0 AS m, s.terms AS c
              FROM (SELECT DISTINCT kind, source_id FROM outbox WHERE stage = 'text' AND owner_id = ${ownerId} AND kind IN ${list(kinds)}) o
              JOIN search_terms s ON s.owner_id = ${ownerId} AND s.kind = o.kind AND s.source_id = o.source_id
            UNION ALL SELECT DISTINCT 'p' AS t, kind AS a, source_id AS b, 0 AS n, 0 AS m, '' AS c FROM outbox
              WHERE stage = 'text' AND owner_id = ${ownerId} AND kind IN ${list(kinds)}
            UNION ALL SELECT 'c' AS t, grp AS a, '' AS b, items AS n, length AS m, '' AS c FROM search_corpus
              WHERE owner_id = ${ownerId} AND grp IN ${list(groups)}
            ${termBranch}`,
      );
      const snapshot: OwnSnapshot = { pending: [], corpus: new Map(), df: new Map(), stale: [] };
      for (const row of rows) {
        const group = row.a as PartitionGroup;
        if (row.t === "p") snapshot.pending.push({ ownerId, kind: row.a as SearchKind, sourceId: row.b });
        else if (row.t === "c") snapshot.corpus.set(group, { items: Number(row.n), length: Number(row.m) });
        else if (row.t === "d")
          (snapshot.df.get(group) ?? snapshot.df.set(group, new Map()).get(group)!).set(row.b, Number(row.n));
        else snapshot.stale.push({ group, text: decodeField(row.c, terms)! });
      }
      return snapshot;
    },

    /** What scoring needs of some of an owner's indexed items (the counts of `terms` only), by `itemKey`. */
    async forwardRows(
      db: Executor,
      ownerId: string,
      items: Array<{ kind: SearchKind; sourceId: string; itemId: string }>,
      terms: readonly string[],
    ): Promise<Map<string, ItemTerms>> {
      const out = new Map<string, ItemTerms>();
      const byKind = new Map<SearchKind, typeof items>();
      for (const item of items) (byKind.get(item.kind) ?? byKind.set(item.kind, []).get(item.kind)!).push(item);
      for (const [kind, ofKind] of byKind) {
        for (const chunk of chunks(ofKind, 200)) {
          const itemIds =
            kind === "memory" ? sql`` : sql`AND item_id IN ${list([...new Set(chunk.map((i) => i.itemId))])}`;
          const rows = await all<{
            source_id: string;
            item_id: string;
            terms: string;
            context: string;
            wvec: string;
            created_at: number;
          }>(
            db,
            sql`SELECT source_id, item_id, terms, context, wvec, created_at FROM search_terms
                WHERE owner_id = ${ownerId} AND kind = ${kind} AND source_id IN ${list([...new Set(chunk.map((i) => i.sourceId))])} ${itemIds}`,
          );
          for (const row of rows) {
            out.set(itemKey({ kind, sourceId: row.source_id, itemId: row.item_id }), {
              text: decodeField(row.terms, terms)!,
              ...decodeContext(row.context, terms),
              vector: decodeVector(row.wvec),
              at: Number(row.created_at),
            });
          }
        }
      }
      return out;
    },
  };
}

export type TermStats = ReturnType<typeof createTermStats>;

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
