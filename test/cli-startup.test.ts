import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { databaseEnvFor, dropDatabaseFor } from "./helpers/database";

/**
 * Commands that only read or write the store of record must start without the server,
 * LanceDB (a 200 MB native module a compiled binary would extract first), onnxruntime or
 * Elysia. Checked by the modules each run actually loaded, not by timing.
 */
const ROOT = join(import.meta.dir, "..");
const PRELOAD = join(import.meta.dir, "cli-startup-preload.ts");
const HEAVY = [
  /node_modules\/@lancedb\//,
  /node_modules\/onnxruntime-node\//,
  /node_modules\/apache-arrow\//,
  /node_modules\/elysia\//,
  /\/src\/services\.ts$/,
  /\/src\/server\.ts$/,
];
const CONFIG = [/node_modules\/@sinclair\/typebox\//, /\/src\/config\.ts$/];
const root = mkdtempSync(join(tmpdir(), "mnemo-cli-startup-"));
const dataDirs = new Set<string>();
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  for (const dir of dataDirs) await dropDatabaseFor(dir);
});

let runs = 0;
async function loadedModules(args: string[], dataDir?: string) {
  const out = join(root, `loaded-${++runs}.json`);
  if (dataDir) dataDirs.add(dataDir);
  const proc = Bun.spawn([process.execPath, "--preload", PRELOAD, join(ROOT, "cli", "mnemo.ts"), ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: root,
      EMBEDDINGS_PROVIDER: "none",
      MNEMO_LOADED_MODULES_OUT: out,
      ...(dataDir ? await databaseEnvFor(dataDir) : {}),
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  expect({ args, exitCode, stderr: exitCode === 0 ? "" : stderr }).toEqual({ args, exitCode: 0, stderr: "" });
  const modules = JSON.parse(readFileSync(out, "utf8")) as string[];
  return {
    stdout,
    modules,
    heavy: modules.filter((m) => HEAVY.some((re) => re.test(m))),
    /** What help alone must not load either: the configuration and its schema library (TypeBox). */
    config: modules.filter((m) => CONFIG.some((re) => re.test(m))),
  };
}

/** The top-level commands `mnemo --help` lists, so commands added later are checked too. */
function listedCommands(help: string): string[] {
  // The section ends at the first blank line (the examples after it are not commands).
  const section = (help.split(/^Commands:$/m)[1] ?? "").split(/\n\s*\n/)[0];
  return [...section.matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1]).filter((name) => name !== "help");
}

describe("CLI startup loads no server and no native modules", () => {
  test("--help, and --help of every command and subcommand (these not even the configuration)", async () => {
    const top = await loadedModules(["--help"]);
    expect({ heavy: top.heavy, config: top.config }).toEqual({ heavy: [], config: [] });
    const commands = listedCommands(top.stdout);
    expect(commands).toEqual(expect.arrayContaining(["serve", "keys", "dev-token", "reindex", "models"]));
    for (const command of commands) {
      const help = await loadedModules([command, "--help"]);
      expect({ command, heavy: help.heavy, config: help.config }).toEqual({ command, heavy: [], config: [] });
      for (const sub of listedCommands(help.stdout)) {
        const subHelp = await loadedModules([command, sub, "--help"]);
        expect({ command: `${command} ${sub}`, heavy: subHelp.heavy, config: subHelp.config }).toEqual({
          command: `${command} ${sub}`,
          heavy: [],
          config: [],
        });
      }
    }
  });

  test("keys create, keys list, keys revoke and dev-token create open only the store of record", async () => {
    const dataDir = join(root, "data");
    const created = await loadedModules(["keys", "create", "--user", "alice", "--json", "--data", dataDir], dataDir);
    expect(created.heavy).toEqual([]);
    // The store's commands read the configuration (so the check of help above does see it when it loads).
    expect(created.config.length).toBeGreaterThan(0);
    const key = JSON.parse(created.stdout) as { id: string };
    for (const args of [
      ["keys", "list", "--json"],
      ["keys", "revoke", key.id],
      ["dev-token", "create", "--user", "alice"],
    ]) {
      const run = await loadedModules([...args, "--data", dataDir], dataDir);
      expect({ args, heavy: run.heavy }).toEqual({ args, heavy: [] });
    }
  });

  test("serve and reindex are what load them (the check sees heavy modules when they load)", async () => {
    const dataDir = join(root, "reindex-data");
    const run = await loadedModules(["reindex", "--json", "--data", dataDir], dataDir);
    expect(run.heavy.some((m) => m.includes("@lancedb"))).toBe(true);
  });
});
