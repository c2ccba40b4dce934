import { describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import fc from "fast-check";
import * as z from "zod";
import { MemoryRecord } from "../src/memories/model";
import { MemoryOutput } from "../src/mcp/schemas";
import { TOOLS } from "../src/mcp/tools";
import { toZod, toZodShape } from "../src/mcp/typebox-zod";
import { valueFor } from "./reliability/lib/arbitraries";

/*
 * The tools' schemas are TypeBox, handed to the MCP SDK as zod by one converter. These check
 * that the converted schema accepts exactly what the TypeBox one accepts, on values drawn from
 * the schema itself (mostly valid, often at a bound, sometimes the wrong type).
 */

const pools = { ids: ["mem_1", "ws_1", "prop_1", "doc-1"], queries: ["tea"] };

/** Metadata filter keys must not be empty: TypeBox's record cannot say so, the converter keeps `propertyNames`. */
const hasEmptyKey = (value: unknown): boolean =>
  typeof value === "object" &&
  value !== null &&
  Object.entries(value).some(([key, inner]) => key === "" || hasEmptyKey(inner));
/** Lengths differ on characters outside the BMP: TypeBox counts code points, zod UTF-16 units (as the tools always have). */
const hasAstral = (value: unknown) => /[\uD800-\uDFFF]/.test(JSON.stringify(value) ?? "");

describe("MCP tool schemas derived from TypeBox", () => {
  for (const tool of TOOLS) {
    test(`${tool.name}: the zod input accepts what the TypeBox input accepts`, () => {
      const zodInput = z.object(toZodShape(tool.input));
      fc.assert(
        fc.property(valueFor(tool.input as never, pools), (args) => {
          if (hasEmptyKey(args) || hasAstral(args)) return;
          expect({ args, accepted: zodInput.safeParse(args).success }).toEqual({
            args,
            accepted: Value.Check(tool.input, args),
          });
        }),
        { numRuns: 300 },
      );
    });
  }

  test("every output converts, and a memory's output is the REST record less its storage-only fields", () => {
    for (const tool of TOOLS) expect(() => toZod(tool.output)).not.toThrow();
    const storageOnly = ["ownerId", "projectId", "status"];
    expect(Object.keys(MemoryOutput.properties)).toEqual(
      Object.keys(MemoryRecord.properties).filter((key) => !storageOnly.includes(key)),
    );
  });

  test("an empty metadata filter key is refused, as before the schemas were TypeBox", () => {
    const recall = z.object(toZodShape(TOOLS.find((t) => t.name === "recall")!.input));
    expect(recall.safeParse({ query: "q", filters: { metadata: { "": "x" } } }).success).toBe(false);
    expect(recall.safeParse({ query: "q", filters: { metadata: { topic: "x" } } }).success).toBe(true);
  });

  test("a keyword the converter does not know fails at once instead of being dropped", () => {
    expect(() => toZod(Type.Array(Type.String(), { uniqueItems: true }))).toThrow(
      "toZod: the keyword 'uniqueItems' is not supported",
    );
    expect(() => toZod(Type.Record(Type.Number(), Type.String()))).toThrow("toZod: the key patterns");
  });

  test("typed extra keys of an object are checked, as TypeBox checks them", () => {
    const schema = Type.Object({ named: Type.Optional(Type.String()) }, { additionalProperties: Type.Number() });
    const values = [{ named: "x", extra: 1 }, { named: "x", extra: "1" }, { extra: null }];
    expect(values.map((value) => toZod(schema).safeParse(value).success)).toEqual(
      values.map((value) => Value.Check(schema, value)),
    );
  });
});
