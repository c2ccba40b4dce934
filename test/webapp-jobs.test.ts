import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import OpenAI from "openai";
import { buildWebApp, WEB_DIST } from "../scripts/build-app";
import { launchBrowser, openTab, signIn, skipBrowser, visit, type AppTab } from "./helpers/app-browser";
import { startFakeUpstream, type FakeUpstream } from "./helpers/fake-upstream";
import { mock, startTestServer, type TestServer } from "./helpers/server";
import { waitUntil } from "./helpers/wait";

/** The web app's view of extraction jobs (Your server → Memory extraction) and of a memory added twice. */
let fake: FakeUpstream;
let server: TestServer;
let browser: Browser | undefined;
beforeAll(async () => {
  // Before the server: it reads the build on the first request for /app.
  await buildWebApp(WEB_DIST);
  fake = startFakeUpstream({ reply: "ok" });
  // An hour between attempts: a failed attempt stays `retrying` until retried.
  server = await startTestServer({
    env: { LLM_GATEWAY_URL: fake.url, MNEMO_MEMORY_MODEL: "memory-model", MNEMO_EXTRACTION_RETRY_MS: "3600000" },
  });
  if (!skipBrowser) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.destroy();
  fake?.stop();
});

/** After each browser test: nothing left the machine, no page error, no CSP violation. */
async function closeClean(tab: AppTab): Promise<void> {
  await tab.close();
  expect({ blocked: tab.blocked, problems: tab.problems }).toEqual({ blocked: [], problems: [] });
}

const jobsOf = async (user: string) =>
  (await server.call("GET", "/v1/memories/extract/jobs", { token: mock(user) }))[1].data as any[];

describe.skipIf(skipBrowser)("the app in headless Chromium", () => {
  test("a failing extraction job is listed with why; Retry runs it again and its memory forms", async () => {
    fake.script.push("ok", "Sorry, I cannot answer in JSON.");
    const client = new OpenAI({
      apiKey: mock("wj-a"),
      baseURL: `${server.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { "X-Svc-Remember": "true" },
    });
    await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "I collect stamps." }] });
    await server.services.capture.idle();
    const [job] = await waitUntil(
      async () => {
        await server.services.capture.runDue();
        return jobsOf("wj-a");
      },
      (list) => list[0]?.status === "retrying",
      { what: "a retrying job" },
    );

    const tab = await openTab(browser!);
    const { page } = tab;
    await signIn(tab, server.url, mock("wj-a"));
    await visit(tab, "/app/server#jobs");
    const row = page.locator(`.job-row[data-id="${job.id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain("Retrying");
    expect(await row.textContent()).toContain("not usable");

    fake.script.push({ facts: ["The user collects stamps"] }, { decisions: [{ fact: 0, action: "add" }] });
    await row.getByRole("button", { name: `Retry job ${job.id}` }).click();
    await page.locator(".toast", { hasText: "Queued again" }).waitFor();
    const [done] = await waitUntil(
      async () => {
        await server.services.capture.runDue();
        return jobsOf("wj-a");
      },
      (list) => list[0]?.status === "done",
      { what: "the retried job done" },
    );
    expect(done.id).toBe(job.id);
    const [, memories] = await server.call("GET", "/v1/memories", { token: mock("wj-a") });
    expect(memories.data.map((m: any) => m.content)).toEqual(["The user collects stamps"]);
    await closeClean(tab);
  });

  test("adding a memory the user already has says Already remembered, and lists it once", async () => {
    const [status] = await server.call("POST", "/v1/memories", {
      token: mock("wj-b"),
      body: { content: "The kettle is in the left cupboard" },
    });
    expect(status).toBe(201);
    const tab = await openTab(browser!);
    const { page } = tab;
    await signIn(tab, server.url, mock("wj-b"));
    await page.locator(".memory-row", { hasText: "The kettle is in the left cupboard" }).waitFor();
    await page.getByRole("button", { name: "Add memory" }).click();
    const dialog = page.getByRole("dialog", { name: "New memory" });
    await dialog.getByRole("textbox", { name: "Content" }).fill("the kettle is in the  LEFT cupboard");
    await dialog.getByRole("button", { name: "Add memory" }).click();
    await dialog.waitFor({ state: "detached" });
    await page.locator(".toast", { hasText: "Already remembered" }).waitFor();
    expect(await page.locator(".memory-row").count()).toBe(1);
    const [, memories] = await server.call("GET", "/v1/memories", { token: mock("wj-b") });
    expect(memories.data).toHaveLength(1);
    await closeClean(tab);
  });
});
