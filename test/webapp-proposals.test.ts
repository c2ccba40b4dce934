import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { buildWebApp, WEB_DIST } from "../scripts/build-app";
import { launchBrowser, openTab, signIn, skipBrowser } from "./helpers/app-browser";
import { captureWith, refOf, remember } from "./helpers/capture";
import { startFakeUpstream, type FakeUpstream } from "./helpers/fake-upstream";
import { mock, startTestServer, type TestServer } from "./helpers/server";

/** The app's review list of proposals: reached from the memories view, accept and reject, a stale one explained. */
let fake: FakeUpstream;
let server: TestServer;
let browser: Browser | undefined;
beforeAll(async () => {
  // Before the server: it reads the build on the first request for /app.
  await buildWebApp(WEB_DIST);
  fake = startFakeUpstream();
  server = await startTestServer({
    env: { LLM_GATEWAY_URL: fake.url, MNEMO_MEMORY_MODEL: "memory-model", MNEMO_EXTRACTION_RETRY_MS: "0" },
  });
  if (!skipBrowser) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.destroy();
  fake?.stop();
});

const contentOf = async (id: string) =>
  (await server.call("GET", `/v1/memories/${id}`, { token: mock("wp") }))[1].content;

describe.skipIf(skipBrowser)("proposals in the app", () => {
  test("accept applies, reject leaves the memory, a memory changed since shows why it cannot apply", async () => {
    const city = await remember(server, "wp", "The user lives in Lyon");
    const pet = await remember(server, "wp", "The user has a hamster");
    const job = await remember(server, "wp", "The user works as a nurse");
    await captureWith(server, fake, "wp", {
      message: "I moved to Nice, the hamster went to my cousin, and I am a midwife now.",
      facts: ["The user lives in Nice", "The user gave the hamster away", "The user works as a midwife"],
      decide: (shown) => [
        { fact: 0, action: "update", ref: refOf(shown, 0, "Lyon"), content: "The user lives in Nice" },
        { fact: 1, action: "delete", ref: refOf(shown, 1, "hamster") },
        { fact: 2, action: "update", ref: refOf(shown, 2, "nurse"), content: "The user works as a midwife" },
      ],
    });
    // The person edits one meanwhile: its proposal can no longer apply.
    expect(
      (
        await server.call("PATCH", `/v1/memories/${job}`, {
          token: mock("wp"),
          body: { content: "The user works as a doctor" },
        })
      )[0],
    ).toBe(200);

    const tab = await openTab(browser!);
    try {
      const { page } = tab;
      await signIn(tab, server.url, mock("wp"));
      await page.locator("#review-proposals").click();
      await page.getByRole("heading", { name: "Proposals" }).waitFor();
      const items = page.locator("#proposal-list > li");
      await items.nth(2).waitFor();
      expect(await items.count()).toBe(3);
      const item = (text: string) => items.filter({ hasText: text });
      expect(await item("Lyon").locator(".proposed").textContent()).toBe("The user lives in Nice");

      await item("Lyon").getByRole("button", { name: "Accept" }).click();
      await item("Lyon").waitFor({ state: "detached" });
      await item("hamster").getByRole("button", { name: "Reject" }).click();
      await item("hamster").waitFor({ state: "detached" });
      await item("doctor").getByRole("button", { name: "Accept" }).click();
      await item("doctor").getByRole("alert").filter({ hasText: "changed since it was proposed" }).waitFor();

      expect([await contentOf(city), await contentOf(pet), await contentOf(job)]).toEqual([
        "The user lives in Nice",
        "The user has a hamster",
        "The user works as a doctor",
      ]);
      await item("doctor").getByRole("button", { name: "Reject" }).click();
      await page.getByText("No proposals to review.").waitFor();
      expect((await server.call("GET", "/v1/memories/proposals", { token: mock("wp") }))[1].data).toEqual([]);
    } finally {
      await tab.close();
    }
    expect({ blocked: tab.blocked, problems: tab.problems }).toEqual({ blocked: [], problems: [] });
  });
});
