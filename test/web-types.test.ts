import { expect, test } from "bun:test";
import { join } from "node:path";
import type { MemoryRecord } from "../src/memories/model";
import type { Memory, NewMemory } from "../web/src/api-types";

/*
 * The web app's API types are generated from the OpenAPI document (web/src/api-schema.ts);
 * web/src/api-types.ts only names them. A route's schema that changes without a regeneration
 * fails here, and `bun x tsc --noEmit -p web` then shows what in the app the change touches.
 */

test("the generated files (both clients and the web app's types) are what the server's OpenAPI document renders (npm run generate:clients when this fails)", () => {
  // A fresh process, as the generator runs: once a server of this process has answered, Elysia
  // has added `additionalProperties: false` to the response schemas it compiled, and a later
  // server of the same process lists them so.
  const check = Bun.spawnSync([process.execPath, "scripts/generate-clients.ts", "--check"], {
    cwd: join(import.meta.dir, ".."),
  });
  expect({ exitCode: check.exitCode, stdout: check.stdout.toString(), stderr: check.stderr.toString() }).toEqual({
    exitCode: 0,
    stdout: "",
    stderr: "",
  });
});

/** true when A and B are the same type (checked by the compiler: `bun x tsc --noEmit`). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

test("the app's Memory has the fields of the stored record, and a new memory the fields POST /v1/memories takes", () => {
  const memoryFields: Same<keyof Memory, keyof MemoryRecord> = true;
  const sessionTyped: Same<NewMemory["session_id"], string | undefined> = true;
  expect([memoryFields, sessionTyped]).toEqual([true, true]);
});
