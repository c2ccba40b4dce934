const SNIPPET_CHARS = 240;
const LEAD_CHARS = 60;

/**
 * A short excerpt of `text` around the first word of `query` it contains (the start
 * when none), whitespace collapsed, with `…` where it was cut.
 *
 * @example snippet("a long text … about owls …", "owls") // "…about owls …"
 */
export function snippet(text: string, query: string, max = SNIPPET_CHARS): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const lower = flat.toLowerCase();
  const words = query.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? [];
  const hits = words.map((word) => lower.indexOf(word)).filter((i) => i >= 0);
  const at = hits.length ? Math.min(...hits) : 0;
  const start = Math.max(0, Math.min(at - LEAD_CHARS, flat.length - max));
  const end = Math.min(flat.length, start + max);
  return `${start > 0 ? "…" : ""}${flat.slice(start, end).trim()}${end < flat.length ? "…" : ""}`;
}
