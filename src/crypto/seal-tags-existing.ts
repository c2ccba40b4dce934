import type { Executor } from "../db/store";
import type { SealTags } from "./seal-tags";
import type { SealedFieldSource } from "./sealed-fields";

const PAGE = 500;

/**
 * Tags every stored field that holds ciphertext, as found: run once, when a store gets its
 * tag key (an upgrade from before tags), so that values stored before keep opening. From
 * then on only writes through the server tag a field. The records come from each domain's
 * source, over every user; fields without a place of their own (a client's unbound values)
 * and empty ones are left alone. Returns how many fields were tagged.
 */
export function tagExistingFields(sources: SealedFieldSource[]) {
  return async (tx: Executor, tags: SealTags): Promise<number> => {
    let tagged = 0;
    for (const source of sources) {
      for (let after: string | null = null; ; ) {
        const { records, last } = await source.page(tx, null, after, PAGE);
        for (const { value, binding } of records.flat()) {
          if (binding === null || value === null || value === undefined) continue;
          await tags.stamp(tx, binding, value);
          tagged++;
        }
        if (records.length < PAGE) break;
        after = last;
      }
    }
    return tagged;
  };
}
