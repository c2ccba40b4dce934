import { createHash } from "node:crypto";
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, join, relative, sep } from "node:path";
import { markdownBlocks } from "../documents/markdown-blocks";
import type { IndexedBlock } from "../documents/record";
import { slugify } from "../documents/slug";

/** One Markdown file of a folder (an Obsidian vault), as a unified document to store. */
export interface MarkdownDocument {
  /** Path inside the folder, with `/` separators: what the id is derived from. */
  path: string;
  id: string;
  title: string;
  markdown: string;
  metadata: Record<string, unknown>;
  blocks: IndexedBlock[];
  rootBlockId: string;
  createdAt: string;
  updatedAt: string;
}

const hash = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 32);

/** Every `.md` file under `dir`, skipping dot folders (`.obsidian`, `.trash`, `.git`). */
export async function markdownFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (at: string) => {
    const entries = await readdir(at, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith(".")) continue;
      const full = join(at, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile() && /\.(md|markdown)$/i.test(entry.name)) out.push(full);
    }
  };
  await walk(dir);
  return out;
}

/** A YAML scalar of the simple kind front-matter uses: quoted strings, numbers, booleans, `[a, b]` lists. */
function scalar(raw: string): unknown {
  const value = raw.trim();
  if (value === "") return null;
  if (/^(true|false)$/i.test(value)) return value.toLowerCase() === "true";
  if (/^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (/^(null|~)$/.test(value)) return null;
  if (value.startsWith("[") && value.endsWith("]")) {
    return value
      .slice(1, -1)
      .split(",")
      .map((part) => scalar(part))
      .filter((part) => part !== null);
  }
  const quoted = /^"(.*)"$|^'(.*)'$/.exec(value);
  return quoted ? (quoted[1] ?? quoted[2]) : value;
}

/**
 * Splits `---` front-matter from the body. Understands the subset vaults use: `key: value`
 * and `key:` followed by `- item` lines; anything else is kept as the raw text under
 * `frontMatter` rather than guessed at.
 */
export function parseFrontMatter(text: string): { data: Record<string, unknown>; body: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!match) return { data: {}, body: text };
  const data: Record<string, unknown> = {};
  let listKey: string | null = null;
  let understood = true;
  for (const line of match[1].split(/\r?\n/)) {
    if (!line.trim() || line.trimStart().startsWith("#")) continue;
    const item = /^\s+-\s+(.*)$|^-\s+(.*)$/.exec(line);
    if (item && listKey) {
      (data[listKey] as unknown[]).push(scalar(item[1] ?? item[2]));
      continue;
    }
    const pair = /^([A-Za-z0-9_][\w .-]*):(?:\s+(.*))?$/.exec(line);
    if (!pair) {
      understood = false;
      continue;
    }
    const key = pair[1].trim();
    if (pair[2] === undefined || pair[2].trim() === "") {
      data[key] = [];
      listKey = key;
    } else {
      data[key] = scalar(pair[2]);
      listKey = null;
    }
  }
  if (!understood) data.frontMatter = match[1];
  return { data, body: text.slice(match[0].length) };
}

const WIKI = /\[\[([^[\]|#\n]+)((?:#[^[\]|\n]*)?)((?:\|[^[\]\n]*)?)\]\]/g;

/**
 * Obsidian links name a file (`[[My Note]]`), while edges resolve a link by the linked
 * document's title. Where a file's title (its first heading) differs from its name, the
 * link in the indexed block is rewritten to `[[Title|My Note]]` so it still resolves;
 * the stored Markdown is left exactly as written.
 */
function resolveLinks(content: string, titleByName: Map<string, string>): string {
  return content.replace(WIKI, (whole, target: string, heading: string, alias: string) => {
    const title = titleByName.get(slugify(target.trim().split("/").pop()!));
    if (!title || slugify(title) === slugify(target)) return whole;
    return `[[${title}${heading}${alias || `|${target.trim()}`}]]`;
  });
}

/**
 * Reads a folder of Markdown files into documents: title from front-matter `title`,
 * else the first `# heading`, else the file name; front-matter becomes metadata (with
 * the file's `path`); blocks are split as the server splits Markdown, with `[[links]]`
 * resolved to titles so they become block edges. Ids derive from the path, so a re-run
 * finds the same documents.
 */
export async function readMarkdownFolder(
  dir: string,
  scope: string,
  onError: (place: string, message: string) => void,
): Promise<MarkdownDocument[]> {
  const files = await markdownFiles(dir);
  const docs: Array<MarkdownDocument & { name: string }> = [];
  for (const file of files) {
    const path = relative(dir, file).split(sep).join("/");
    try {
      const [text, info] = await Promise.all([readFile(file, "utf8"), stat(file)]);
      const { data, body } = parseFrontMatter(text);
      const name = basename(file).replace(/\.(md|markdown)$/i, "");
      const heading = /^ {0,3}#\s+(.+?)\s*#*\s*$/m.exec(body)?.[1];
      const title = (typeof data.title === "string" && data.title.trim()) || heading?.trim() || name;
      const created =
        typeof data.created === "string"
          ? Date.parse(data.created)
          : typeof data.date === "string"
            ? Date.parse(data.date)
            : NaN;
      const createdAt = new Date(Number.isNaN(created) ? info.birthtimeMs || info.mtimeMs : created).toISOString();
      docs.push({
        name,
        path,
        id: `doc_${hash(`${scope}\u001f${path}`)}`,
        title: title.slice(0, 500),
        markdown: body,
        metadata: { ...data, path },
        blocks: markdownBlocks(body),
        rootBlockId: `blk_${hash(`${scope}\u001f${path}\u001froot`)}`,
        createdAt,
        updatedAt: new Date(Math.max(info.mtimeMs, Date.parse(createdAt))).toISOString(),
      });
    } catch (error) {
      onError(path, (error as Error).message);
    }
  }
  const titleByName = new Map(docs.map((d) => [slugify(d.name), d.title]));
  for (const doc of docs) doc.blocks = doc.blocks.map((b) => ({ ...b, content: resolveLinks(b.content, titleByName) }));
  return docs.map(({ name: _name, ...doc }) => doc);
}
