import type { Sent } from "./transport.js";

/** A page as the API answers it: an object with `nextCursor`, or an array with the cursor in `X-Next-Cursor`. */
export type PageFetcher = (cursor: string | undefined) => Promise<Sent<unknown>>;

/**
 * Every item of a cursor-paged list, fetching pages as the loop asks for them.
 * `field` names the array in an object page (`data`, `documents`, `files`); array pages need none.
 *
 * @example
 * for await (const memory of mnemo.memories.list()) console.log(memory.content);
 */
export async function* paginate<T>(fetchPage: PageFetcher, field?: string): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const { body, response } = await fetchPage(cursor);
    const items = (Array.isArray(body) ? body : (body as Record<string, unknown>)[field ?? "data"]) as T[];
    yield* items;
    const next = Array.isArray(body)
      ? response.headers.get("x-next-cursor")
      : (body as { nextCursor?: string | null }).nextCursor;
    cursor = next ?? undefined;
  } while (cursor);
}
