/**
 * Every relative link of the docs (docs/*.md, README.md) names a file that exists, and
 * its `#anchor`, when it has one, names a heading of that file (GitHub's slugs); so does
 * every `docs/<page>.md#anchor` a comment of the code cites.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const PAGES = [
  join(ROOT, "README.md"),
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(ROOT, "docs", name)),
];

/** The text outside fenced code blocks and inline code, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*_~]/g, (mark) => (mark === "_" ? "_" : ""))
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

/** The anchors of a page's headings, duplicates numbered as GitHub numbers them. */
function anchorsOf(path: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const text = readFileSync(path, "utf8").replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const match of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(match[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const match of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1]);
  return anchors;
}

/** Broken relative links of one page, as `target: why`. */
function brokenLinks(page: string): string[] {
  const broken: string[] = [];
  for (const match of prose(readFileSync(page, "utf8")).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: and the like
    const [file, anchor] = target.split("#", 2) as [string, string | undefined];
    const path = file ? resolve(dirname(page), decodeURIComponent(file)) : page;
    if (!existsSync(path)) {
      broken.push(`${target}: no such file`);
      continue;
    }
    if (anchor === undefined || !path.endsWith(".md") || statSync(path).isDirectory()) continue;
    if (!anchorsOf(path).has(decodeURIComponent(anchor)))
      broken.push(`${target}: no heading with that anchor in ${relative(ROOT, path)}`);
  }
  return broken;
}

/** Every `docs/<page>.md[#anchor]` cited in the code's source files, as `file:line: target`. */
function codeCitations(): Array<{ where: string; page: string; anchor?: string }> {
  const found: Array<{ where: string; page: string; anchor?: string }> = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && entry.name !== "dist") walk(path);
      } else if (/\.(ts|js|py)$/.test(entry.name)) {
        for (const [i, line] of readFileSync(path, "utf8").split("\n").entries()) {
          for (const match of line.matchAll(/docs\/([\w-]+\.md)(?:#([\w-]+))?/g)) {
            found.push({ where: `${relative(ROOT, path)}:${i + 1}`, page: match[1], anchor: match[2] });
          }
        }
      }
    }
  };
  for (const dir of ["src", "cli", "web/src", "scripts", "bench", "test", "clients"]) walk(join(ROOT, dir));
  return found;
}

describe("links between the docs", () => {
  test("the slug of a heading is GitHub's", () => {
    expect(
      [
        "Read-your-writes by construction",
        "`mnemo open`: a sign-in link",
        "Capture (`X-Svc-Remember: true`)",
        "Files & uploads",
      ].map(slug),
    ).toEqual([
      "read-your-writes-by-construction",
      "mnemo-open-a-sign-in-link",
      "capture-x-svc-remember-true",
      "files--uploads",
    ]);
  });

  test.each(PAGES.map((page) => [relative(ROOT, page)]))("%s has no broken relative link or anchor", (page) => {
    expect(brokenLinks(join(ROOT, page))).toEqual([]);
  });

  test("every docs/<page>.md#anchor the code cites exists", () => {
    const broken = codeCitations().filter(({ page, anchor }) => {
      const path = join(ROOT, "docs", page);
      return !existsSync(path) || (anchor !== undefined && !anchorsOf(path).has(anchor));
    });
    expect(broken.map(({ where, page, anchor }) => `${where}: docs/${page}${anchor ? `#${anchor}` : ""}`)).toEqual([]);
  });
});
