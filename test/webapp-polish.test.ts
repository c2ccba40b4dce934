import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { buildWebApp, WEB_DIST } from "../scripts/build-app";
import { launchBrowser, openTab, signIn, skipBrowser, visit, type AppTab } from "./helpers/app-browser";
import { startTestServer, type TestServer } from "./helpers/server";

let server: TestServer;
let browser: Browser | undefined;
/** Each test leaves a screenshot of what it checked here, for a look. */
const shotsDir = mkdtempSync(join(tmpdir(), "mnemo-app-polish-"));

beforeAll(async () => {
  // The server serves the app from web/dist: built first.
  await buildWebApp(WEB_DIST);
  server = await startTestServer();
  if (!skipBrowser) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.destroy();
  console.log(`screenshots: ${shotsDir}`);
});

/** Runs `body` in a signed-in tab; afterwards nothing left the machine and the page had no error. */
async function inApp(user: string, shot: string, body: (tab: AppTab) => Promise<void>): Promise<void> {
  const tab = await openTab(browser!);
  try {
    await signIn(tab, server.url, `mock-token-${user}`);
    await body(tab);
    await tab.page.screenshot({ path: join(shotsDir, `${shot}.png`), fullPage: true });
  } finally {
    await tab.close();
  }
  expect({ blocked: tab.blocked, problems: tab.problems }).toEqual({ blocked: [], problems: [] });
}

describe.skipIf(skipBrowser)("web app polish", () => {
  test("a memory's text opens its page", async () => {
    const [, memory] = await server.call("POST", "/v1/memories", {
      token: "mock-token-pa",
      body: { content: "The kettle whistles in B flat" },
    });
    await inApp("pa", "memory-text-link", async ({ page }) => {
      await page
        .locator(".memory-row", { hasText: "The kettle whistles" })
        .getByRole("link", { name: "The kettle whistles in B flat", exact: true })
        .click();
      await page.waitForURL(`**/app/memories/${memory.id}`);
      await page.locator(".memory-content-full", { hasText: "The kettle whistles in B flat" }).waitFor();
    });
  });

  test("a search result's score and signal bars share one absolute scale: each bar is as long as its number", async () => {
    for (const content of [
      "Walnut trees shade the north garden",
      "The walnut harvest comes in October, walnut by walnut",
      "Figs ripen against the south wall",
    ]) {
      expect((await server.call("POST", "/v1/memories", { token: "mock-token-pb", body: { content } }))[0]).toBe(201);
    }
    await inApp("pb", "search-bars", async ({ page }) => {
      await page.locator("#memory-search").pressSequentially("walnut");
      // The word-vector signal may bring related memories too: the two walnut ones at least.
      await page.locator(".status-line", { hasText: /results? for “walnut”/ }).waitFor();
      for (const text of ["Walnut trees shade", "The walnut harvest"])
        await page.locator(".memory-row", { hasText: text }).locator(".bar-score").waitFor();
      const bars = await page.locator(".memory-row .bar-row").evaluateAll((rows) =>
        rows.map((row) => ({
          value: Number(row.querySelector(".bar-value")!.textContent),
          width: (row.querySelector(".bar-fill") as unknown as { style: { width: string } }).style.width,
        })),
      );
      // Two hits, each with a score bar and at least one signal bar.
      expect(bars.length).toBeGreaterThanOrEqual(4);
      expect(bars.map((bar) => bar.width)).toEqual(bars.map((bar) => `${Math.round(bar.value * 100)}%`));
    });
  });

  test("a memory made in the app shows the source its history records", async () => {
    await inApp("pc", "memory-source", async ({ page }) => {
      await page.getByRole("button", { name: "Add memory" }).click();
      const dialog = page.getByRole("dialog", { name: "New memory" });
      await dialog.getByRole("textbox", { name: "Content" }).fill("The loom needs a new heddle");
      await dialog.getByRole("button", { name: "Add memory" }).click();
      await dialog.waitFor({ state: "detached" });
      await page.getByRole("link", { name: "The loom needs a new heddle", exact: true }).click();
      await page.locator(".history-item", { hasText: "from app" }).waitFor();
      expect(await page.locator("dl.facts dt:text-is('Source') + dd").textContent()).toBe("app");
    });
  });

  test("a document made with New document is labelled a document", async () => {
    const [, workspace] = await server.call("POST", "/v1/workspaces", {
      token: "mock-token-pd",
      body: { name: "Atelier" },
    });
    await inApp("pd", "new-document-label", async (tab) => {
      await visit(tab, `/app/workspaces/${workspace.id}/documents`);
      await tab.page.getByRole("button", { name: "New document" }).click();
      const dialog = tab.page.getByRole("dialog", { name: "New document" });
      await dialog.getByRole("textbox", { name: "Title" }).fill("Dye recipes");
      await dialog.getByRole("textbox", { name: "Markdown" }).fill("Madder root for red.");
      await dialog.getByRole("button", { name: "Create document" }).click();
      await tab.page.locator("#document-title", { hasText: "Dye recipes" }).waitFor();
      expect(await tab.page.locator(".document-header .muted").textContent()).toStartWith("document · updated");
    });
  });
});
