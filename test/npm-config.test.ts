import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

describe("the project's npm configuration", () => {
  test("npm run prints no warning (no unknown config keys in .npmrc)", async () => {
    const proc = Bun.spawn(["npm", "run", "mnemo", "--", "--version"], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, exitCode] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    expect({ exitCode, version: stdout.trim().split("\n").at(-1), stderr }).toEqual({
      exitCode: 0,
      version: "0.1.0",
      stderr: "",
    });
  });

  test("onnxruntime-node's install script (a CUDA download from NuGet) is denied; the ones npm install needs are allowed", () => {
    const { allowScripts } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    expect(allowScripts).toMatchObject({ "onnxruntime-node": false, bun: true });
  });
});
