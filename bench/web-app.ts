/**
 * Measures the web app, served by the server itself at /app, against its budgets, in
 * headless Chromium on loopback:
 * - app.js gzipped (≤ 200 KB);
 * - sign-in → first memories on screen (≤ 500 ms): the app's own performance marks, from
 *   the Sign in click to the rendered list, over fresh tabs;
 * - a search keystroke → results on screen at 10,000 memories (≤ 100 ms): one key at a
 *   time through real queries, each measured from its input event (debounce included).
 *
 *   bun bench/web-app.ts [--memories 10000] [--tabs 5] [--queries 8]
 *
 * Full-text search unless EMBEDDINGS_PROVIDER names an embedder (a model it must have).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ingest } from "./lib/client";
import { memoryTexts, queryTexts } from "./lib/corpus";
import { summarize } from "./lib/stats";
import { loadConfig } from "../src/config";
import { createLogger } from "../src/lib/log";
import { startServer } from "../src/server";
import { launchBrowser, openTab, signIn } from "../test/helpers/app-browser";
import { buildWebApp } from "../scripts/build-app";

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const MEMORIES = arg("--memories", 10_000);
const TABS = arg("--tabs", 5);
const QUERIES = arg("--queries", 8);
const USER = "measure";

/** Polls an expression in the page (waitForFunction would need eval, which the app's CSP forbids). */
async function until(page: import("playwright-core").Page, expression: string): Promise<void> {
  for (let i = 0; i < 6000 && !(await page.evaluate(expression)); i++) await Bun.sleep(5);
}

const dataDir = mkdtempSync(join(tmpdir(), "mnemo-measure-app-"));
// web/dist, which the server serves at /app: built before it starts.
const built = await buildWebApp();
const config = loadConfig(
  { dataDir, port: 0, allowMockTokens: true, logLevel: "error" },
  { EMBEDDINGS_PROVIDER: "none", ...process.env },
);
const server = await startServer(config, { log: createLogger("error") });
const app = { url: server.url };
const browser = await launchBrowser();

try {
  process.stderr.write(`seeding ${MEMORIES} memories…\n`);
  const seeded = await ingest(server.url, USER, memoryTexts(26, MEMORIES), 8);
  // Searches are measured against a caught-up index, as a person would meet it.
  for (;;) {
    const health = (await (
      await fetch(`${server.url}/health`, { headers: { authorization: `Bearer mock-token-${USER}` } })
    ).json()) as { index: { pending: number | null } };
    if (health.index.pending === 0) break;
    await Bun.sleep(200);
  }

  const signInTimes: number[] = [];
  const signInRequests: Record<string, number[]> = {};
  for (let i = 0; i < TABS; i++) {
    const tab = await openTab(browser);
    await signIn(tab, app.url, `mock-token-${USER}`);
    await until(tab.page, `performance.getEntriesByName("mnemo:sign-in-to-memories").length > 0`);
    signInTimes.push(
      (await tab.page.evaluate(`performance.getEntriesByName("mnemo:sign-in-to-memories")[0].duration`)) as number,
    );
    const entries = (await tab.page.evaluate(
      `performance.getEntriesByType("resource").filter((e) => e.name.includes("/v1/")).map((e) => [new URL(e.name).pathname, e.duration])`,
    )) as Array<[string, number]>;
    for (const [path, duration] of entries) {
      signInRequests[path] ??= [];
      signInRequests[path].push(duration);
    }
    await tab.close();
  }

  const tab = await openTab(browser);
  await signIn(tab, app.url, `mock-token-${USER}`);
  await tab.page.evaluate("performance.setResourceTimingBufferSize(100000)");
  const search = tab.page.locator("#memory-search");
  const measured = `performance.getEntriesByName("mnemo:search-keystroke-to-results").length`;
  const keystrokes: number[] = [];
  const requests: number[] = [];
  let renders: number[] = [];
  for (const query of queryTexts(26, QUERIES)) {
    await search.fill("");
    for (const key of query) {
      const before = (await tab.page.evaluate(measured)) as number;
      await search.press(key === " " ? "Space" : key);
      if (!query.slice(0, query.indexOf(key) + 1).trim()) continue;
      await until(tab.page, `${measured} > ${before}`);
    }
    const durations = (await tab.page.evaluate(
      `performance.getEntriesByName("mnemo:search-keystroke-to-results").map((e) => e.duration)`,
    )) as number[];
    keystrokes.push(...durations.slice(keystrokes.length));
    const fetches = (await tab.page.evaluate(
      `performance.getEntriesByType("resource").filter((e) => e.name.endsWith("/v1/memories/search")).map((e) => e.duration)`,
    )) as number[];
    requests.push(...fetches.slice(requests.length));
    renders = (await tab.page.evaluate(
      `performance.getEntriesByName("mnemo:search-render").map((e) => e.duration)`,
    )) as number[];
  }
  await tab.close();

  const ms = (s: ReturnType<typeof summarize>) => `p50 ${s.p50} ms, p95 ${s.p95} ms, max ${s.max} ms (n=${s.n})`;
  process.stdout.write(
    `${[
      `app.js: ${(built.jsBytes / 1024).toFixed(1)} KB, ${(built.jsGzipBytes / 1024).toFixed(1)} KB gzipped (budget 200 KB)`,
      `seeded ${MEMORIES} memories in ${(seeded.wallMs / 1000).toFixed(1)} s; search: ${config.embeddings.provider === "none" ? "full text" : config.embeddings.provider}`,
      `sign-in → first memories rendered: ${ms(summarize(signInTimes))} (budget 500 ms)`,
      ...Object.entries(signInRequests).map(([path, times]) => `  ${path}: ${ms(summarize(times))}`),
      `search keystroke → results rendered at ${MEMORIES} memories: ${ms(summarize(keystrokes))} (budget 100 ms; includes the debounce)`,
      `  of which the search request (browser → server → browser): ${ms(summarize(requests))}`,
      `  and rendering the results: ${ms(summarize(renders))}`,
    ].join("\n")}\n`,
  );
} finally {
  await browser.close();
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
