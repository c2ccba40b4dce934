/**
 * U+0000 in text is refused at the edge, whatever the backend: PostgreSQL text cannot
 * hold it (SQLite can), so one store would refuse what the other keeps. Request guards
 * check JSON bodies, query strings and paths; the MCP server checks tool arguments.
 * Opaque bytes (a presigned file PUT, base64 upload parts) are not text and not checked.
 */
export const NUL_PROBLEM = "contains the NUL character U+0000, which no text value may hold";

/**
 * The dotted path of the first string or key in a parsed JSON value holding U+0000
 * (`metadata.tags.1`; `root` for the value itself), or null. Iterative: any depth is safe.
 */
export function findNul(value: unknown, root = "body"): string | null {
  const pending: Array<[unknown, string]> = [[value, ""]];
  while (pending.length) {
    const [item, path] = pending.pop()!;
    if (typeof item === "string") {
      if (item.includes("\0")) return path || root;
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) pending.push([item[i], join(path, String(i))]);
    } else if (item !== null && typeof item === "object") {
      const entries = Object.entries(item);
      for (const [key] of entries) if (key.includes("\0")) return `${path || root} (a key)`;
      for (let i = entries.length - 1; i >= 0; i--) pending.push([entries[i][1], join(path, entries[i][0])]);
    }
  }
  return null;
}

const join = (path: string, segment: string) => (path ? `${path}.${segment}` : segment);
