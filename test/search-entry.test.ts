import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * The search side has one entry, `src/search/index.ts`: the app and the CLI import it and
 * nothing inside `src/search/`; and the search side imports nothing above it (no domain,
 * no HTTP), only the layers below: the config, the store of record, lib and shared.
 */
const ROOT = join(import.meta.dir, "..");

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(".ts"))
    .map((path) => join(dir, path));
}

/** Every module a file imports (static, dynamic and re-exports), as paths from the repository root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm)].map(
    (m) => m[1],
  );
  return specifiers.map((specifier) => relative(ROOT, resolve(ROOT, dirname(file), specifier)).replace(/\.ts$/, ""));
}

describe("the search side's one entry", () => {
  test("outside src/search/, the app and the CLI import search only through src/search/index.ts", () => {
    const files = [...sourceFiles("src"), ...sourceFiles("cli")].filter((file) => !file.startsWith("src/search/"));
    const reaching = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith("src/search/") && target !== "src/search/index")
        .map((target) => `${file} -> ${target}`),
    );
    expect(reaching).toEqual([]);
  });

  test("src/search/ imports nothing above it: only itself, the config, the store of record, lib and shared", () => {
    const below = ["src/search/", "src/db/", "src/lib/", "src/shared/", "src/config"];
    const upward = sourceFiles("src/search").flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith("src/") && !below.some((allowed) => target.startsWith(allowed)))
        .map((target) => `${file} -> ${target}`),
    );
    expect(upward).toEqual([]);
  });
});
