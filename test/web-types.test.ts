import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { renderWebTypes } from "../clients/codegen/web-types";
import type { MemoryRecord } from "../src/memories/model";
import type { Memory, NewMemory } from "../web/src/api-types";
import { startTestServer, type TestServer } from "./helpers/server";

/*
 * The web app's API types are generated from the OpenAPI document (web/src/api-schema.ts);
 * web/src/api-types.ts only names them. A route's schema that changes without a regeneration
 * fails here, and `bun x tsc --noEmit -p web` then shows what in the app the change touches.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.destroy();
});

test("web/src/api-schema.ts is what the server's OpenAPI document renders (npm run generate:clients when this fails)", async () => {
  const [status, doc] = await server.call("GET", "/openapi/json");
  expect(status).toBe(200);
  expect(readFileSync(join(import.meta.dir, "../web/src/api-schema.ts"), "utf8")).toBe(renderWebTypes(doc));
});

/** true when A and B are the same type (checked by the compiler: `bun x tsc --noEmit`). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

test("the app's Memory has the fields of the stored record, and a new memory the fields POST /v1/memories takes", () => {
  const memoryFields: Same<keyof Memory, keyof MemoryRecord> = true;
  const sessionTyped: Same<NewMemory["session_id"], string | undefined> = true;
  expect([memoryFields, sessionTyped]).toEqual([true, true]);
});
