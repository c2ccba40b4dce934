/** Letters NFKD does not decompose into ASCII. */
const FOLD: Record<string, string> = { ß: "ss", æ: "ae", ø: "o", œ: "oe", đ: "d", ð: "d", ł: "l", þ: "th", ı: "i" };
const MAX_SLUG = 80;

/**
 * A title's slug: lowercase, ASCII-folded, runs of anything else as one hyphen, no
 * leading or trailing hyphen, at most 80 characters; `untitled` when nothing is left.
 *
 * @example slugify("Crème Brûlée: Ünïcode & more!") // "creme-brulee-unicode-more"
 */
export function slugify(title: string): string {
  const folded = title
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[ßæøœđðłþı]/g, (ch) => FOLD[ch]);
  const slug = folded
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, MAX_SLUG)
    .replace(/-+$/, "");
  return slug || "untitled";
}

/**
 * The first free slug among `base`, `base-2`, `base-3`…, given the slugs already taken
 * in the workspace (those equal to `base` or starting with `base-`).
 */
export function uniqueSlug(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}
