/**
 * Login CSRF through the sign-in link: any site can send a browser to
 * `/app/#signin=<its own link>`. With a session open, the app reads whom the link is for
 * (without using it) and asks before replacing the session; declining leaves both as they
 * were. A link pasted into a tab where the app is open works without a reload, asking the same.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { buildWebApp } from "../scripts/build-app";
import { launchBrowser, openTab, skipBrowser, type AppTab } from "./helpers/app-browser";
import { startTestServer, type TestServer } from "./helpers/server";
import { waitFor } from "./helpers/wait";

let server: TestServer;
let browser: Browser | undefined;

beforeAll(async () => {
  // Before the server: it reads web/dist on the first request for /app.
  await buildWebApp();
  server = await startTestServer();
  if (!skipBrowser) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.destroy();
});

const link = async (user: string) => (await server.services.appSessions.createLink(user)).token;
const unused = async (token: string) => (await server.services.appSessions.peekLink(token)).ok;

/** Whom the browser's session cookie signs in, asked of the server; null when it is refused. */
async function sessionUser(tab: AppTab): Promise<string | null> {
  const cookie = (await tab.context.cookies()).find((c) => c.name === "mnemo_session");
  if (!cookie) return null;
  const [status, body] = await server.call("GET", "/v1/me", {
    token: null,
    headers: { cookie: `mnemo_session=${cookie.value}`, "x-mnemo-app": "1" },
  });
  return status === 200 ? body.userId : null;
}

async function signedInWithLink(user: string): Promise<AppTab> {
  const opened = await openTab(browser!);
  await opened.page.goto(`${server.url}/app/#signin=${await link(user)}`);
  await opened.page.locator(".who", { hasText: user }).waitFor();
  return opened;
}

async function closeClean(opened: AppTab): Promise<void> {
  await opened.close();
  expect({ blocked: opened.blocked, problems: opened.problems }).toEqual({ blocked: [], problems: [] });
}

describe("POST /v1/app/link", () => {
  test("says whom a link signs in without using it; only with the app's header; refusals as for sign-in", async () => {
    const token = await link("lotte");
    const ask = (body: unknown, headers: Record<string, string> = { "x-mnemo-app": "1" }) =>
      server.call("POST", "/v1/app/link", { token: null, body, headers });
    expect(await ask({ token })).toEqual([200, { userId: "lotte", expiresAt: expect.any(String) }]);
    expect(await unused(token)).toBe(true);
    expect((await ask({ token }, {}))[0]).toBe(403);
    expect(await ask({ token: "nope" })).toEqual([
      401,
      { error: { code: "unauthorized", message: expect.stringContaining("not known") } },
    ]);
    expect(await ask({ token, extra: 1 })).toEqual([
      400,
      expect.objectContaining({ error: expect.objectContaining({ code: "invalid_request" }) }),
    ]);
    await server.services.appSessions.useLink(token);
    expect(await ask({ token })).toEqual([
      401,
      { error: { code: "unauthorized", message: expect.stringContaining("already used") } },
    ]);
  });
});

describe.skipIf(skipBrowser)("a sign-in link with a session open, in headless Chromium", () => {
  test("another site sending the browser to someone else's link: the app asks, and declining changes nothing", async () => {
    const victim = await signedInWithLink("vera");
    const attackers = await link("mallory");
    await victim.page.goto(`${server.url}/app/#signin=${attackers}`);
    const dialog = victim.page.getByRole("dialog", { name: "Switch account?" });
    await dialog.getByText("You are signed in as vera. Sign in as mallory instead?").waitFor();
    expect(new URL(victim.page.url()).hash).toBe("");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    expect([
      await sessionUser(victim),
      await unused(attackers),
      await victim.page.locator(".who").textContent(),
    ]).toEqual(["vera", true, "Signed in as vera"]);
    await closeClean(victim);
  });

  test("confirmed, the link signs in as its user and the session held before ends on the server", async () => {
    const tab = await signedInWithLink("vera");
    const before = (await tab.context.cookies()).find((c) => c.name === "mnemo_session")!.value;
    const token = await link("walt");
    await tab.page.goto(`${server.url}/app/#signin=${token}`);
    await tab.page
      .getByRole("dialog", { name: "Switch account?" })
      .getByRole("button", { name: "Sign in as walt" })
      .click();
    await tab.page.locator(".who", { hasText: "walt" }).waitFor();
    expect([await sessionUser(tab), await unused(token)]).toEqual(["walt", false]);
    const old = await server.call("GET", "/v1/me", {
      token: null,
      headers: { cookie: `mnemo_session=${before}`, "x-mnemo-app": "1" },
    });
    expect(old[0]).toBe(401);
    await closeClean(tab);
  });

  test("the same user's link keeps the session and stays unused", async () => {
    const tab = await signedInWithLink("yael");
    const token = await link("yael");
    await tab.page.goto(`${server.url}/app/#signin=${token}`);
    await tab.page.getByText("You are already signed in as yael.").waitFor();
    expect([await sessionUser(tab), await unused(token), await tab.page.getByRole("dialog").count()]).toEqual([
      "yael",
      true,
      0,
    ]);
    await closeClean(tab);
  });

  test("a link pasted into an open tab works without a reload: signed out it signs in, signed in it asks", async () => {
    const tab = await openTab(browser!);
    await tab.page.goto(`${server.url}/app/`);
    await tab.page.getByRole("heading", { name: "Sign in" }).waitFor();
    // Only the fragment changes: no new page load, a hashchange.
    const first = await link("zora");
    await tab.page.evaluate(`location.hash = ${JSON.stringify(`#signin=${first}`)}`);
    await tab.page.locator(".who", { hasText: "zora" }).waitFor();
    expect(await sessionUser(tab)).toBe("zora");

    const second = await link("quill");
    await tab.page.evaluate(`location.hash = ${JSON.stringify(`#signin=${second}`)}`);
    await tab.page
      .getByRole("dialog", { name: "Switch account?" })
      .getByRole("button", { name: "Sign in as quill" })
      .click();
    await tab.page.locator(".who", { hasText: "quill" }).waitFor();
    await waitFor(async () => (await sessionUser(tab)) === "quill", { what: "the session to be quill's" });
    expect(new URL(tab.page.url()).hash).toBe("");
    await closeClean(tab);
  });
});
