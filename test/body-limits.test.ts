import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { t } from "elysia";
import { buildApp } from "../src/app";
import { errorPlugin } from "../src/http/error-plugin";
import { requestGuards } from "../src/http/request-guards";
import { createRouteCatalog } from "../src/http/route-catalog";
import { DEFAULT_BODY_LIMITS } from "../src/lib/body-limits";
import { createLogger } from "../src/lib/log";
import { createRouter } from "../src/lib/router";
import { startTestServer, type TestServer } from "./helpers/server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.destroy();
});

const post = (path: string, body: string) =>
  new Request(`http://localhost${path}`, { method: "POST", headers: { "content-type": "application/json" }, body });

describe("a route's body limit is declared on the route", () => {
  test("the parser applies the route's own bodyLimit option, the defaults for what it leaves out", async () => {
    const routes = createRouter()
      .post("/small", ({ body }) => body, { body: t.Object({ text: t.String() }), bodyLimit: { bytes: 32 } })
      .post("/flat", ({ body }) => body, { body: t.Any(), bodyLimit: { nodes: 3 } })
      .post("/plain", ({ body }) => body, { body: t.Object({ text: t.String() }) });
    const catalog = createRouteCatalog(() => app.routes);
    const app = createRouter()
      .use(errorPlugin(createLogger("error"), {}))
      .use(requestGuards(catalog))
      .use(routes);
    const answer = async (request: Request) => {
      const response = await app.handle(request);
      return [response.status, await response.json()];
    };
    expect(await answer(post("/small", JSON.stringify({ text: "fits" })))).toEqual([200, { text: "fits" }]);
    expect(await answer(post("/small", JSON.stringify({ text: "x".repeat(40) })))).toEqual([
      413,
      { error: { code: "payload_too_large", message: "body: is larger than 32 bytes, the limit of this route" } },
    ]);
    expect((await answer(post("/flat", JSON.stringify([1, 2, 3]))))[0]).toBe(400);
    expect(await answer(post("/plain", JSON.stringify({ text: "x".repeat(40) })))).toEqual([
      200,
      { text: "x".repeat(40) },
    ]);
    expect(catalog.routeFor("POST", "/flat")?.limits).toEqual({ ...DEFAULT_BODY_LIMITS, nodes: 3 });
    expect(catalog.routeFor("POST", "/plain")?.limits).toEqual(DEFAULT_BODY_LIMITS);
  });

  test("the app's table of limits is read from its routes", () => {
    const app = buildApp(server.services, () => server.url);
    const table = Object.fromEntries(
      createRouteCatalog(() => app.routes)
        .bodyLimitTable()
        .map(({ route, limits }) => [route, limits]),
    );
    const MB = 1024 * 1024;
    const documents = { bytes: 20 * MB, depth: 32, nodes: 1_000_000 };
    const artifacts = { bytes: 12 * MB, depth: 32, nodes: 1_000_000 };
    expect(table).toEqual({
      "POST /v1/memories": { bytes: 512 * 1024, depth: 32, nodes: 100_000 },
      "PATCH /v1/memories/:id": { bytes: 512 * 1024, depth: 32, nodes: 100_000 },
      "POST /v1/app/session": { bytes: 16 * 1024, depth: 2, nodes: 8 },
      "POST /v1/app/link": { bytes: 16 * 1024, depth: 2, nodes: 8 },
      "POST /v1/keys": { bytes: 4 * 1024, depth: 3, nodes: 32 },
      "POST /v1/memories/extract": { bytes: 4 * MB, depth: 32, nodes: 100_000 },
      "PUT /v1/me/capture": { bytes: 1024, depth: 32, nodes: 100_000 },
      "POST /v1/uploads/:uploadId/part": { bytes: 12 * MB, depth: 32, nodes: 100_000 },
      "POST /v1/workspaces/:workspaceId/chats/:threadId/messages": { bytes: 2 * MB, depth: 32, nodes: 100_000 },
      "POST /v1/documents": documents,
      "PATCH /v1/documents/:id": documents,
      "POST /v1/workspaces/:workspaceId/documents": documents,
      "PUT /v1/workspaces/:workspaceId/documents/:documentId": documents,
      "POST /v1/workspaces/:workspaceId/notes": documents,
      "PATCH /v1/workspaces/:workspaceId/notes/:noteId": documents,
      "POST /v1/workspaces/:workspaceId/notebooks": artifacts,
      "PUT /v1/workspaces/:workspaceId/vector-manifest": artifacts,
      "PUT /v1/workspaces/:workspaceId/search/block-index": artifacts,
      "PUT /v1/workspaces/:workspaceId/graph/block-edges": artifacts,
      "PUT /v1/workspaces/:workspaceId/files/:key": "streamed",
    });
  });
});
