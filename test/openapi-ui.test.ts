import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { startTestServer, type TestServer } from "./helpers/server";

/** Debian's `chromium` package (`.ci/run` installs it); CHROMIUM_PATH overrides. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? Bun.which("chromium") ?? "/usr/bin/chromium";
const haveChromium = existsSync(CHROMIUM);
// Locally a missing browser skips the browser test; in CI it must fail, never pass silently.
const skipBrowser = !haveChromium && !process.env.CI;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.destroy());

describe("the OpenAPI page", () => {
  test("is served from this server: no external URL in the page, the bundle is embedded", async () => {
    const page = await fetch(`${server.url}/openapi`);
    expect([page.status, page.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
    const html = await page.text();
    expect(html.match(/\b(https?:)?\/\/[^\s"'<>]+/g)).toBeNull();
    expect(html).toContain('src="openapi/scalar.js"');

    const script = await fetch(`${server.url}/openapi/scalar.js`);
    expect([script.status, script.headers.get("content-type")]).toEqual([200, "text/javascript; charset=utf-8"]);
    expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);
  });

  test("the page and its bundle are no operations of the documented API", async () => {
    const [status, spec] = await server.call("GET", "/openapi/json", { token: null });
    expect(status).toBe(200);
    expect(Object.keys(spec.paths).filter((p) => p.startsWith("/openapi"))).toEqual([]);
  });

  test.skipIf(skipBrowser)("renders in headless Chromium with every non-loopback request blocked", async () => {
    expect(
      haveChromium
        ? CHROMIUM
        : `chromium not found at ${CHROMIUM} (under CI it must be there: .ci/run installs Debian's chromium)`,
    ).toBe(CHROMIUM);
    let browser: Browser | undefined;
    try {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        // No sandbox: CI runs as root in a container. No DNS: belt and braces with the route below.
        args: ["--no-sandbox", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
      });
      const context = await browser.newContext({ serviceWorkers: "block" });
      const blocked: string[] = [];
      await context.route("**/*", (route) => {
        const url = new URL(route.request().url());
        if (
          url.protocol === "data:" ||
          url.protocol === "blob:" ||
          url.hostname === "127.0.0.1" ||
          url.hostname === "localhost"
        )
          return route.continue();
        blocked.push(url.href);
        return route.abort("internetdisconnected");
      });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      await page.goto(`${server.url}/openapi`, { waitUntil: "load" });
      // The document's title and an operation of the API, both rendered from /openapi/json.
      await page.getByText("Mnemo", { exact: true }).first().waitFor({ timeout: 30_000 });
      await page.getByText("/v1/memories/search").first().waitFor({ timeout: 30_000 });
      expect({ blocked, errors }).toEqual({ blocked: [], errors: [] });
    } finally {
      await browser?.close();
    }
  });
});
