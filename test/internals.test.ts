import { describe, expect, test } from "bun:test";
import { QueryBase } from "@lancedb/lancedb";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";

// The two places where Mnemo uses a library's internals (docs/architecture.md, "Where we
// depend on internals"). Both degrade quietly when the internal goes away, so these fail
// loudly instead, naming the upgrade that needs a look.

const installed = (name: string): string =>
  JSON.parse(readFileSync(join(import.meta.dir, "..", "node_modules", name, "package.json"), "utf8")).version;

describe("internals of pinned libraries", () => {
  test("LanceDB still has the protected nativeExecute that src/search/lance/arrow-rows.ts reads result bytes through", () => {
    const version = installed("@lancedb/lancedb");
    const hook = typeof (QueryBase.prototype as unknown as { nativeExecute?: unknown }).nativeExecute;
    if (hook !== "function") {
      throw new Error(
        `@lancedb/lancedb ${version}: QueryBase.nativeExecute is gone; re-check src/search/lance/arrow-rows.ts (searches fall back to toArray, slower) before taking this upgrade`,
      );
    }
    expect({ version, hook }).toEqual({ version: "0.39.0", hook: "function" });
  });

  test("the MCP SDK still funnels tool errors through the private createToolError that src/mcp/server.ts wraps", () => {
    const version = installed("@modelcontextprotocol/sdk");
    const hook = typeof (McpServer.prototype as unknown as { createToolError?: unknown }).createToolError;
    if (hook !== "function") {
      throw new Error(
        `@modelcontextprotocol/sdk ${version}: McpServer.createToolError is gone; the SDK's own tool errors would go out as bare text. Re-check src/mcp/server.ts before taking this upgrade`,
      );
    }
    expect({ version, hook }).toEqual({ version: "1.32.2", hook: "function" });
  });
});
