import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

// The rules of docs/architecture.md, checked on the source text: imports point downward,
// no circles, domains talk through each other's public modules, SQL stays in repositories
// and the store, only config.ts reads the environment, and the CLI builds services through
// the composition root. Each allow-list below is debt, one line of reason per entry.

const ROOT = resolve(import.meta.dir, "..");

/** The layers, bottom first; an import may point to its own layer or one below. */
const LAYERS: Array<{ name: string; members: string[] }> = [
  {
    name: "base",
    members: ["src/config.ts", "src/config-schema.ts", "src/config-errors.ts", "src/data-paths.ts", "src/lib/"],
  },
  { name: "shared", members: ["src/shared/"] },
  { name: "store", members: ["src/db/"] },
  { name: "search", members: ["src/search/"] },
  { name: "domains", members: ["src/"] },
  { name: "http", members: ["src/http/"] },
  { name: "migrations", members: ["src/migrations.ts"] },
  {
    name: "composition",
    members: ["src/compose.ts", "src/composition/", "src/record-store.ts", "src/transfer/open.ts"],
  },
  { name: "app", members: ["src/app.ts"] },
  { name: "server", members: ["src/server.ts"] },
  { name: "cli", members: ["cli/"] },
];

/** Imports that run up a layer, each with why it stays. */
const UPWARD_ALLOWED: Record<string, string> = {};

/** Imports of another domain's repository, each with why it stays. */
const REPOSITORY_ALLOWED: Record<string, string> = {};

/** Files outside repositories and the store that hold SQL, each with why. */
const SQL_ALLOWED: Record<string, string> = {};

/** Tables a file touches that another domain owns, as "file: table", each with why. */
const TABLES_ALLOWED: Record<string, string> = {};

/** Files besides src/config.ts that read `process.env`, each with why. */
const ENV_ALLOWED: Record<string, string> = {
  "cli/mnemo.ts": "NO_COLOR is the terminal's, not Mnemo's configuration",
  "cli/commands/open.ts": "CI, DISPLAY and WAYLAND_DISPLAY decide whether a browser can be opened, a terminal matter",
};

/** CLI files that build services or repositories themselves, each with why. */
const CLI_BUILDS_ALLOWED: Record<string, string> = {};

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(ROOT, path)).isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

const FILES = [...sourceFiles("src"), ...sourceFiles("cli")];
const TEXT = new Map(FILES.map((file) => [file, readFileSync(join(ROOT, file), "utf8")]));

/** The text without comments, so that a comment naming SQL or `process.env` is no finding. */
function code(file: string): string {
  return TEXT.get(file)!
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/(^|[\s;{}(),])\/\/[^\n]*/g, "$1");
}

/** Resolves a relative specifier to a file of the tree (null for packages and assets). */
function resolveImport(from: string, specifier: string): string | null {
  if (!specifier.startsWith(".")) return null;
  const base = relative(ROOT, resolve(ROOT, dirname(from), specifier));
  for (const candidate of [base, `${base}.ts`, `${base}/index.ts`]) if (TEXT.has(candidate)) return candidate;
  return existsSync(join(ROOT, base)) ? null : `${base} (missing)`;
}

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

const EDGES: Edge[] = FILES.flatMap((file) => {
  const text = code(file);
  const found: Edge[] = [];
  const statics = /(?:^|\n)\s*(import|export)\s+(type\s+)?[^;]*?\bfrom\s+["']([^"']+)["']/g;
  for (const m of text.matchAll(statics)) {
    const to = resolveImport(file, m[3]);
    if (to) found.push({ from: file, to, typeOnly: !!m[2] });
  }
  for (const m of text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
    const to = resolveImport(file, m[1]);
    // `import("x").T` in a type position is a type; `await import("x")` loads the module.
    if (to)
      found.push({
        from: file,
        to,
        typeOnly:
          !/await\s*$|Promise\.all\(\[[^\]]*$|=>\s*$/.test(text.slice(0, m.index)) &&
          text[m.index! + m[0].length] === ".",
      });
  }
  return found;
});

function layerOf(file: string): number {
  let best = -1;
  let bestLength = -1;
  LAYERS.forEach((layer, index) => {
    for (const member of layer.members) {
      const matches = member.endsWith("/") ? file.startsWith(member) : file === member;
      if (matches && member.length > bestLength) [best, bestLength] = [index, member.length];
    }
  });
  return best;
}

/** The domain folder of a file under src/ (null for files of a lower or higher layer). */
function domainOf(file: string): string | null {
  return LAYERS[layerOf(file)].name === "domains" ? file.split("/")[1] : null;
}

/** The folder that owns each table: the one whose migrations.ts creates it (search for src/search). */
const TABLE_OWNER = new Map<string, string>();
for (const file of FILES.filter((f) => /(^|\/)migrations\.ts$/.test(f) && f !== "src/migrations.ts")) {
  for (const m of code(file).matchAll(/CREATE TABLE (?:IF NOT EXISTS )?(\w+)/g))
    TABLE_OWNER.set(m[1], file.split("/")[1]);
}
const folderOf = (file: string) => file.split("/")[1];

const isRepository = (file: string) => /(^|\/)(repository|[\w-]+-repository)\.ts$/.test(file);

describe("architecture", () => {
  test("every file has a layer", () => {
    expect(FILES.filter((file) => layerOf(file) < 0)).toEqual([]);
  });

  test("imports resolve", () => {
    expect(EDGES.filter((e) => e.to.endsWith("(missing)")).map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  test("imports point to the same layer or below", () => {
    const upward = EDGES.filter((e) => layerOf(e.to) > layerOf(e.from))
      .map((e) => `${e.from} -> ${e.to}`)
      .filter((edge) => !(edge in UPWARD_ALLOWED));
    expect(upward).toEqual([]);
  });

  test("outside search/, only search/index.ts is imported", () => {
    const inside = EDGES.filter(
      (e) => e.to.startsWith("src/search/") && e.to !== "src/search/index.ts" && !e.from.startsWith("src/search/"),
    )
      .map((e) => `${e.from} -> ${e.to}`)
      .filter((edge) => !(edge in UPWARD_ALLOWED));
    expect(inside).toEqual([]);
  });

  test("no circular imports, type-only ones included", () => {
    const next = new Map<string, string[]>();
    for (const e of EDGES) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
    const circles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const path: string[] = [];
    const visit = (file: string) => {
      state.set(file, "open");
      path.push(file);
      for (const to of next.get(file) ?? []) {
        if (state.get(to) === "open") circles.push([...path.slice(path.indexOf(to)), to].join(" -> "));
        else if (!state.has(to)) visit(to);
      }
      path.pop();
      state.set(file, "done");
    };
    for (const file of FILES) if (!state.has(file)) visit(file);
    expect(circles).toEqual([]);
  });

  test("a domain never imports another domain's repository", () => {
    const reaching = EDGES.filter(
      (e) => isRepository(e.to) && domainOf(e.from) && domainOf(e.to) && domainOf(e.from) !== domainOf(e.to),
    )
      .map((e) => `${e.from} -> ${e.to}`)
      .filter((edge) => !(edge in REPOSITORY_ALLOWED));
    expect(reaching).toEqual([]);
  });

  test("SQL only in repositories, migrations and the store", () => {
    const sqlText =
      /\bsql`|\bsql\.raw\(|["'`]\s*(SELECT\s|INSERT\s+INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|CREATE\s+(TABLE|INDEX)\s|ALTER\s+TABLE\s)/;
    const holders = FILES.filter(
      (file) => !file.startsWith("src/db/") && !isRepository(file) && !/(^|\/)migrations\.ts$/.test(file),
    )
      .filter((file) => sqlText.test(code(file)))
      .filter((file) => !(file in SQL_ALLOWED));
    expect(holders).toEqual([]);
  });

  test("the store's migrations create only the store's own tables", () => {
    expect(
      [...TABLE_OWNER]
        .filter(([table, owner]) => owner === "db" && !["leases", "settings"].includes(table))
        .map(([table]) => table),
    ).toEqual([]);
  });

  test("SQL touches only its own domain's tables", () => {
    const foreign = FILES.filter(
      (file) => file.startsWith("src/") && !/(^|\/)migrations\.ts$/.test(file) && !file.startsWith("src/db/"),
    )
      .flatMap((file) =>
        [...new Set([...code(file).matchAll(/\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+(\w+)/g)].map((m) => m[1]))]
          .filter((table) => TABLE_OWNER.has(table) && TABLE_OWNER.get(table) !== folderOf(file))
          .map((table) => `${file}: ${table}`),
      )
      .filter((entry) => !(entry in TABLES_ALLOWED));
    expect(foreign).toEqual([]);
  });

  test("only src/config.ts reads process.env", () => {
    const readers = FILES.filter((file) => file !== "src/config.ts" && /\bprocess\.env\b/.test(code(file))).filter(
      (file) => !(file in ENV_ALLOWED),
    );
    expect(readers).toEqual([]);
  });

  test("the CLI builds services only through the composition root", () => {
    const builders = FILES.filter((file) => file.startsWith("cli/"))
      .filter((file) => {
        const imports = EDGES.filter((e) => e.from === file && !e.typeOnly).map((e) => e.to);
        return (
          imports.some(
            (to) => /\/(service|[\w-]+-service)\.ts$/.test(to) || isRepository(to) || to === "src/db/open.ts",
          ) || /\bcreate\w*(Service|Repository)\(/.test(code(file))
        );
      })
      .filter((file) => !(file in CLI_BUILDS_ALLOWED));
    expect(builders).toEqual([]);
  });

  test("every allow-list entry is still needed", () => {
    const upward = new Set(EDGES.map((e) => `${e.from} -> ${e.to}`));
    const stale = [
      ...Object.keys(UPWARD_ALLOWED).filter((edge) => !upward.has(edge)),
      ...Object.keys(REPOSITORY_ALLOWED).filter((edge) => !upward.has(edge)),
      ...Object.keys(TABLES_ALLOWED).filter((entry) => !code(entry.split(":")[0]).includes(entry.split(": ")[1])),
      ...[...Object.keys(SQL_ALLOWED), ...Object.keys(ENV_ALLOWED), ...Object.keys(CLI_BUILDS_ALLOWED)].filter(
        (file) => !TEXT.has(file),
      ),
    ];
    expect(stale).toEqual([]);
  });

  test("source files stay under 400 lines (generated ones aside)", () => {
    const web = sourceFiles("web/src").map((file) => [file, readFileSync(join(ROOT, file), "utf8")] as const);
    const long = [...TEXT.entries(), ...web]
      .filter(([, text]) => !text.startsWith("// Generated by "))
      .map(([file, text]) => `${file}: ${text.split("\n").length - (text.endsWith("\n") ? 1 : 0)}`)
      .filter((entry) => Number(entry.split(": ")[1]) > 400);
    expect(long).toEqual([]);
  });
});
