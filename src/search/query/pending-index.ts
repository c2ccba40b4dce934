import type { Executor } from "../../db/store";
import { itemKey, type PendingRow, type TermStats } from "../indexing/term-stats";
import type { WrittenSinceIndexed } from "../indexing/compaction-policy";
import { textTable, type PartitionGroup } from "../lance/partitions";
import type { IndexView } from "./index-view";
import type { SearchKind } from "../types";
import { TermPostings, termsOf, type PendingEntry } from "./pending-postings";

export type { PendingEntry } from "./pending-postings";

/** One owner's pending items of one partition group, as this process last read them. */
class OwnerPending {
  /** The highest outbox seq read: the next look reads only what came after it. */
  lastSeq = 0;
  /**
   * The group's version (term-stats-repository.ts `statistics`) the last read began after,
   * and the newest one a search brought since: while they match and nothing is queued, no
   * change came since, and a search reads nothing.
   */
  version = -1;
  asked = -1;
  readonly sources = new Map<string, { seq: number; kind: SearchKind; keys: string[] }>();
  /**
   * The sources that still have a change on the outbox (a retained one may not): their
   * newest change is not in the index's table yet.
   */
  readonly queued = new Set<string>();
  /** Sources with a change on the outbox, per kind. */
  readonly perKind = new Map<SearchKind, number>();
  readonly items = new Map<string, PendingEntry>();
  /** Term → the items holding it in their text or context. */
  readonly postings = new Map<string, TermPostings>();
  /**
   * Sources the writer put into the table since its full-text index last covered every
   * row: kept after they leave the outbox, until that index covers them again.
   */
  readonly retained = new Set<string>();
  /** Whether the items hold every row of the table outside its full-text index (LanceDB may then skip them). */
  covers = false;
  /** The writer's list being followed: its generation and how much of it was read. */
  private followed: { generation: number; read: number } | null = null;
  /** The oldest pending seq at the last look: sources older than it (and not retained) are gone already. */
  private oldest: number | null | undefined = undefined;
  /** `follow` let retained sources go since the last `settle`: they are dropped at the next. */
  private released = false;
  private reading: Promise<void> | null = null;
  private next: Promise<void> | null = null;

  /**
   * Reads what changed since the last look, one read at a time. A read already running may
   * have begun before the caller's own writes: the caller waits for the next one, which
   * every caller arriving meanwhile shares.
   */
  update(read: () => Promise<void>): Promise<void> {
    if (!this.reading) {
      this.reading = read().finally(() => {
        this.reading = null;
      });
      return this.reading;
    }
    this.next ??= this.reading
      .catch(() => {})
      .then(() => {
        this.next = null;
        return this.update(read);
      });
    return this.next;
  }

  /** Sources with a change on the outbox when last read. */
  queuedCount(): number {
    let n = 0;
    for (const count of this.perKind.values()) n += count;
    return n;
  }

  /** Outbox rows since the last look. */
  read(rows: PendingRow[]): void {
    this.add(rows, true);
  }

  /**
   * Follows the writer's list of what it wrote into the table since its index last
   * covered every row (null: unknown here). Returns the sources on it whose newest write
   * the items do not reflect (it came and left the outbox between two looks), each with
   * the seq of that write: the caller reads their current rows (`fetched`).
   */
  follow(written: Readonly<WrittenSinceIndexed> | null): Map<string, number> {
    if (written?.generation !== this.followed?.generation) {
      // Compacted since (or not known here): what was retained is in the index.
      if (this.retained.size) this.released = true;
      this.retained.clear();
      this.followed = written ? { generation: written.generation, read: 0 } : null;
    }
    this.covers = written !== null;
    const missing = new Map<string, number>();
    if (!written || !this.followed) return missing;
    for (let i = this.followed.read; i < written.sources.length; i++) {
      const source = written.sources[i];
      const seq = written.seqs[i];
      this.retained.add(source);
      if ((this.sources.get(source)?.seq ?? -1) < seq) missing.set(source, Math.max(missing.get(source) ?? 0, seq));
    }
    this.followed.read = written.sources.length;
    return missing;
  }

  /** The current rows of sources `follow` found missing, with the seq it gave them. */
  fetched(rows: PendingRow[]): void {
    this.add(rows, false);
  }

  /**
   * A source whose newest change is older than every pending row is in the index now,
   * unless it waits for the table's full-text index to cover it (retained).
   */
  settle(oldest: number | null): void {
    if (oldest !== this.oldest || this.released)
      for (const [source, known] of this.sources) {
        const queued = this.queued.has(source);
        if (queued && oldest !== null && known.seq >= oldest) continue;
        if (!this.retained.has(source)) this.drop(source);
        else if (queued) {
          this.queued.delete(source);
          this.perKind.set(known.kind, (this.perKind.get(known.kind) ?? 1) - 1);
        }
      }
    this.oldest = oldest;
    this.released = false;
  }

  /** `settle` again with the oldest pending seq of the last read (nothing read since): drops what `follow` released. */
  resettle(): void {
    if (this.released) this.settle(this.oldest ?? null);
  }

  /** `queued`: rows read from the outbox (their seqs move `lastSeq`), else rows read for `follow`. */
  private add(rows: PendingRow[], queued: boolean): void {
    const bySource = new Map<string, PendingRow[]>();
    for (const row of rows) {
      const source = `${row.kind}|${row.sourceId}`;
      (bySource.get(source) ?? bySource.set(source, []).get(source)!).push(row);
      if (queued && row.seq > this.lastSeq) this.lastSeq = row.seq;
    }
    for (const [source, list] of bySource) {
      this.drop(source);
      const keys: string[] = [];
      for (const row of list) {
        if (row.itemId === null || !row.terms) continue;
        const entry = { kind: row.kind, sourceId: row.sourceId, itemId: row.itemId, terms: row.terms, key: "" };
        entry.key = itemKey(entry);
        keys.push(entry.key);
        // Two rows of one item (not expected): the postings hold the one kept.
        const replaced = this.items.get(entry.key);
        if (replaced) this.unpost(replaced);
        this.items.set(entry.key, entry);
        for (const term of termsOf(entry)) {
          const postings = this.postings.get(term) ?? this.postings.set(term, new TermPostings(term)).get(term)!;
          postings.add(entry);
        }
      }
      this.sources.set(source, { seq: list[0].seq, kind: list[0].kind, keys });
      if (queued) {
        this.queued.add(source);
        this.perKind.set(list[0].kind, (this.perKind.get(list[0].kind) ?? 0) + 1);
      }
    }
  }

  private unpost(entry: PendingEntry): void {
    for (const term of termsOf(entry)) {
      const postings = this.postings.get(term);
      postings?.delete(entry);
      if (postings?.size === 0) this.postings.delete(term);
    }
  }

  private drop(source: string): void {
    const known = this.sources.get(source);
    if (!known) return;
    for (const key of known.keys) {
      const entry = this.items.get(key);
      this.items.delete(key);
      if (entry) this.unpost(entry);
    }
    this.sources.delete(source);
    if (this.queued.delete(source)) this.perKind.set(known.kind, (this.perKind.get(known.kind) ?? 1) - 1);
  }
}

/** What a search learns of an owner's pending items of the groups it searches. */
export interface PendingView {
  /** Whether a source (`kind|sourceId`) has a change the index does not reflect yet (one just indexed may still count). */
  has(source: string): boolean;
  /**
   * The pending items of sources whose newest change is not in the index's table yet, for
   * the signals that are not looked up by term (time, word vectors). Items the writer put
   * into the table and keeps here until its full-text index covers them are not among
   * them: LanceDB's time and word-vector lists scan the table's unindexed rows themselves.
   */
  unwritten(): Iterable<PendingEntry>;
  /** The pending items of a group holding a term (in their text or context), if any. */
  postingsOf(group: PartitionGroup, term: string): TermPostings | undefined;
  /** Whether the pending items of a group hold every row of its table outside the full-text index: LanceDB may skip them. */
  indexedOnly(group: PartitionGroup): boolean;
  /** How many sources of these kinds have a change on the outbox (the index does not reflect it yet). */
  lag(kinds: readonly SearchKind[]): number;
  /** How many sources are pending. */
  size: number;
}

/** Owners' pending groups kept at most; past it, the least recently searched are forgotten (read afresh when next searched). */
const MAX_GROUPS = 4_096;

/**
 * The items of an owner's sources that the index does not reflect yet, kept in this
 * process between searches and brought up to date by reading only the outbox rows that
 * came since the last look (their forward rows were written with them): a search's own
 * work follows what changed since, never the size of the index writer's backlog. A source
 * leaves once every one of its changes is off the outbox (then the index holds it), or, in
 * the process that writes the index, once the table's full-text index covers it: until
 * then the writer's list keeps it here (`follow`), so LanceDB's full-text search skips the
 * table's unindexed rows instead of scanning them flat at every search.
 * Read-your-writes holds because an owner's outbox rows of one group get their seqs in
 * commit order (term-stats.ts `refresh` locks the owner's statistics first).
 */
export function createPendingIndex(termStats: TermStats, view: Pick<IndexView, "writtenSinceIndexed">) {
  const groups = new Map<string, OwnerPending>();

  async function current(db: Executor, ownerId: string, group: PartitionGroup, version: number): Promise<OwnerPending> {
    const key = `${ownerId}\u0000${group}`;
    // The map's order is the order of use: the least recently searched come first.
    const owner = groups.get(key) ?? new OwnerPending();
    groups.delete(key);
    groups.set(key, owner);
    if (groups.size > MAX_GROUPS) groups.delete(groups.keys().next().value!);
    owner.asked = Math.max(owner.asked, version);
    await owner.update(async () => {
      // The newest version any caller sharing this read saw (versions only move on).
      const asked = owner.asked;
      // Nothing changed since the last read, and nothing was queued then: nothing to read.
      const unchanged = owner.version === asked && owner.queuedCount() === 0;
      const since = unchanged ? null : await termStats.pendingSince(db, ownerId, group, owner.lastSeq);
      if (since) owner.read(since.rows);
      // After the read: a change that left the outbox before it is on the writer's list by now.
      const missing = owner.follow(view.writtenSinceIndexed(textTable(ownerId, group)));
      if (missing.size) {
        const current = await termStats.sourceRows(db, ownerId, [...missing.keys()]);
        owner.fetched(current.map((row) => ({ ...row, seq: missing.get(`${row.kind}|${row.sourceId}`)! })));
      }
      if (since) {
        owner.settle(since.oldest);
        owner.version = asked;
      } else owner.resettle();
    });
    return owner;
  }

  return {
    /** Brings the owner's pending items of these groups up to date and returns a view of them. */
    async read(
      db: Executor,
      ownerId: string,
      partitionGroups: PartitionGroup[],
      versions: ReadonlyMap<PartitionGroup, number>,
    ): Promise<PendingView> {
      const owners = await Promise.all(
        partitionGroups.map((group) => current(db, ownerId, group, versions.get(group) ?? 0)),
      );
      return {
        has: (source) => owners.some((owner) => owner.sources.has(source)),
        size: owners.reduce((n, owner) => n + owner.sources.size, 0),
        *unwritten() {
          for (const owner of owners)
            for (const source of owner.queued)
              for (const key of owner.sources.get(source)!.keys) yield owner.items.get(key)!;
        },
        postingsOf: (group, term) => owners[partitionGroups.indexOf(group)]?.postings.get(term),
        indexedOnly: (group) => owners[partitionGroups.indexOf(group)]?.covers ?? false,
        lag(kinds) {
          let n = 0;
          for (const owner of owners) for (const kind of kinds) n += owner.perKind.get(kind) ?? 0;
          return n;
        },
      };
    },
  };
}

export type PendingIndex = ReturnType<typeof createPendingIndex>;
