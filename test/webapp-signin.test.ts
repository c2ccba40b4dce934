/**
 * Signing in to the app in headless Chromium, against the server itself at /app: a pasted
 * key and a one-time link both end in an HttpOnly cookie session; a reused or expired link
 * is refused in words; sign-out ends the session on the server. Nothing leaves the machine.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { buildWebApp } from "../scripts/build-app";
import { createAppSessions } from "../src/auth/app-sessions";
import { launchBrowser, openTab, signIn, skipBrowser, type AppTab } from "./helpers/app-browser";
import { startTestServer, type TestServer } from "./helpers/server";

let server: TestServer;
let app: { url: string };
let browser: Browser | undefined;
const shotsDir = mkdtempSync(join(tmpdir(), "mnemo-app-signin-shots-"));

beforeAll(async () => {
  // Before the server: it reads web/dist on the first request for /app.
  await buildWebApp();
  server = await startTestServer();
  app = { url: server.url };
  if (!skipBrowser) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.destroy();
});

const tab = (options?: Parameters<typeof openTab>[1]) => openTab(browser!, options);

/** After each browser test: nothing left the machine, no page error, no CSP violation. */
async function closeClean(opened: AppTab): Promise<void> {
  await opened.close();
  expect({ blocked: opened.blocked, problems: opened.problems }).toEqual({ blocked: [], problems: [] });
}

describe.skipIf(skipBrowser)("signing in to the app in headless Chromium", () => {
  test("signs in with a pasted API key for an HttpOnly session cookie; sign-out ends the session on the server", async () => {
    const alice = await tab();
    const { page } = alice;
    await page.goto(`${app.url}/app/`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await page.getByRole("textbox", { name: "API key" }).fill("svc_sk_live_not-a-key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "not accepted" }).waitFor();
    await signIn(alice, app.url, "mock-token-alice");
    expect(await page.title()).toBe("Memories · Mnemo");
    const stored = await page.evaluate(
      "JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage), document.cookie])",
    );
    expect(stored).not.toContain("mock-token-alice");
    // The session is a cookie the page's script cannot read.
    const cookies = await alice.context.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite, c.path, c.value.length])).toEqual([
      ["mnemo_session", true, "Strict", "/", 43],
    ]);
    expect(stored).not.toContain(cookies[0].value);
    // A reload keeps the session: the cookie, not the page, holds it.
    await page.goto(`${app.url}/app/workspaces`);
    await page.getByRole("heading", { name: "Workspaces" }).waitFor();

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("alert").filter({ hasText: "You are signed out." }).waitFor();
    // The server refuses the old cookie, even sent with the app's header.
    const replay = await fetch(`${server.url}/v1/memories`, {
      headers: { cookie: `mnemo_session=${cookies[0].value}`, "x-mnemo-app": "1" },
    });
    expect(replay.status).toBe(401);
    // Nothing of the session is left: a fresh load of a deep link asks again.
    await page.goto(`${app.url}/app/memories`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await closeClean(alice);
  });

  test("a sign-in link signs in once and leaves the address bar at once; reused and expired links are refused in words", async () => {
    const { token } = await server.services.appSessions.createLink("lina");
    const first = await tab();
    await first.page.goto(`${app.url}/app/#signin=${token}`);
    await first.page.locator(".status-line", { hasText: "newest first" }).waitFor();
    expect(new URL(first.page.url()).hash).toBe("");
    expect((await first.context.cookies()).map((c) => [c.name, c.httpOnly])).toEqual([["mnemo_session", true]]);
    await first.page.screenshot({ path: join(shotsDir, "link-signed-in.png") });

    const second = await tab();
    await second.page.goto(`${app.url}/app/#signin=${token}`);
    await second.page
      .getByRole("alert")
      .filter({ hasText: "This sign-in link was already used: each link works once." })
      .waitFor();
    expect(new URL(second.page.url()).hash).toBe("");
    expect(await second.context.cookies()).toEqual([]);
    await second.page.screenshot({ path: join(shotsDir, "link-reused.png") });

    // A link is opened as a new page (a browser given a URL); a fragment change alone is no load.
    const expired = await createAppSessions(server.services.store, () => Date.now() - 6 * 60_000).createLink("lina");
    const third = await tab();
    await third.page.goto(`${app.url}/app/#signin=${expired.token}`);
    await third.page.getByRole("alert").filter({ hasText: "This sign-in link has expired." }).waitFor();
    expect(await third.page.getByRole("textbox", { name: "API key" }).isVisible()).toBe(true);
    await third.page.screenshot({ path: join(shotsDir, "link-expired.png") });

    const fourth = await tab();
    await fourth.page.goto(`${app.url}/app/#signin=not-a-real-token`);
    await fourth.page.getByRole("alert").filter({ hasText: "This sign-in link was not accepted" }).waitFor();
    for (const opened of [first, second, third, fourth]) await closeClean(opened);
  });

  test("a sign-in as someone else in another tab ends this tab's session instead of switching its user", async () => {
    const first = await tab();
    await first.page.goto(`${app.url}/app/#signin=${(await server.services.appSessions.createLink("sam")).token}`);
    await first.page.locator(".status-line", { hasText: "newest first" }).waitFor();
    // Same browser (one cookie jar), another tab, another user.
    const other = await first.context.newPage();
    await other.goto(`${app.url}/app/#signin=${(await server.services.appSessions.createLink("tess")).token}`);
    // The browser holds sam's session: the link replaces it only once asked (webapp-switch-account.test.ts).
    await other
      .getByRole("dialog", { name: "Switch account?" })
      .getByRole("button", { name: "Sign in as tess" })
      .click();
    await other.locator(".status-line", { hasText: "newest first" }).waitFor();
    await first.page.getByRole("button", { name: "Add memory" }).click();
    const dialog = first.page.getByRole("dialog", { name: "New memory" });
    await dialog.getByRole("textbox", { name: "Content" }).fill("written in sam's tab");
    await dialog.getByRole("button", { name: "Add memory" }).click();
    await first.page.getByRole("alert").filter({ hasText: "Your session has ended. Sign in again." }).waitFor();
    expect((await server.call("GET", "/v1/memories", { token: "mock-token-tess" }))[1].data).toEqual([]);
    expect((await server.call("GET", "/v1/memories", { token: "mock-token-sam" }))[1].data).toEqual([]);
    await closeClean(first);
  });

  test("API keys on the server page: created (the secret shown once) and revoked; a key's own session cannot manage keys", async () => {
    const { token } = await server.services.appSessions.createLink("rosa");
    const rosa = await tab();
    const { page } = rosa;
    await page.goto(`${app.url}/app/#signin=${token}`);
    await page.locator(".status-line", { hasText: "newest first" }).waitFor();
    await page.getByRole("link", { name: "Your server", exact: true }).click();
    await page.getByText("No API keys yet.").waitFor();
    await page.getByRole("textbox", { name: "Name" }).fill("laptop agent");
    await page.getByRole("checkbox", { name: "chat" }).uncheck();
    await page.getByRole("button", { name: "Create key" }).click();
    const secret = page.getByRole("textbox", { name: "Your new API key" });
    await secret.waitFor();
    const key = await secret.inputValue();
    expect(key).toMatch(/^svc_sk_live_/);
    await page.screenshot({ path: join(shotsDir, "key-created.png"), fullPage: true });
    const [, listed] = await server.call("GET", "/v1/memories", { token: key });
    expect(listed.data).toEqual([]);
    await page.getByRole("button", { name: "Done" }).click();
    await secret.waitFor({ state: "detached" });
    // Shown once: a reload lists the key without its secret.
    await page.reload();
    const row = page.locator(".entity-row", { hasText: "laptop agent" });
    await row.waitFor();
    expect(await page.locator("body").textContent()).not.toContain(key);
    expect(await row.locator(".chip").allTextContents()).toEqual([
      "memory:read",
      "memory:write",
      "files:write",
      "usage:read",
    ]);

    // A session made from that key sees the section refuse, in words.
    const agent = await tab();
    await signIn(agent, app.url, key);
    await agent.page.getByRole("link", { name: "Your server", exact: true }).click();
    await agent.page.getByRole("alert").filter({ hasText: "an API key, or a session made from one, cannot" }).waitFor();
    await closeClean(agent);

    await row.getByRole("button", { name: "Revoke laptop agent" }).click();
    await page.getByRole("dialog", { name: "Revoke key" }).getByRole("button", { name: "Revoke" }).click();
    await page.getByText("No API keys yet.").waitFor();
    expect((await server.call("GET", "/v1/memories", { token: key }))[0]).toBe(401);
    await closeClean(rosa);
  });

  test("the server page's index status: a user's session sees its own backlog; the writer's details only an operator's", async () => {
    const rows = async (opened: AppTab) => {
      await opened.page.getByRole("link", { name: "Your server", exact: true }).click();
      await opened.page.locator(".status-summary").waitFor();
      return opened.page.locator("#index dt").allTextContents();
    };
    const user = await tab();
    await user.page.goto(`${app.url}/app/#signin=${(await server.services.appSessions.createLink("uma")).token}`);
    await user.page.locator(".status-line", { hasText: "newest first" }).waitFor();
    expect(await rows(user)).toEqual(["Status", "Lag", "Waiting for text", "Vectors", "Waiting for vectors", "Store"]);
    // A mock token is the operator's too (an operator key's session is checked in health-details.test.ts).
    const operator = await tab();
    await signIn(operator, app.url, "mock-token-ops");
    expect(await rows(operator)).toEqual([
      "Status",
      "Lag",
      "Waiting for text",
      "Vectors",
      "Waiting for vectors",
      "Store",
      "Last indexed",
      "Last error",
    ]);
    for (const opened of [user, operator]) await closeClean(opened);
  });

  afterAll(() => console.log(`screenshots: ${shotsDir}`));
});
