/**
 * Headless Chromium driving the built web app: every request that is not to this machine
 * is blocked and recorded, and so are page errors and Content-Security-Policy violations.
 */
import { existsSync } from "node:fs";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

/** Debian's `chromium` package (`.ci/run` installs it); CHROMIUM_PATH overrides. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? Bun.which("chromium") ?? "/usr/bin/chromium";
export const haveChromium = existsSync(CHROMIUM);
/** Locally a missing browser skips the browser tests; in CI they must fail, never pass silently. */
export const skipBrowser = !haveChromium && !process.env.CI;

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  // No DNS: belt and braces with the request blocking below.
  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
];

export const launchBrowser = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: ARGS });

export interface AppTab {
  page: Page;
  context: BrowserContext;
  /** Requests to anywhere but this machine, blocked. */
  blocked: string[];
  /** Uncaught page errors and CSP violations reported on the console. */
  problems: string[];
  close(): Promise<void>;
}

export async function openTab(
  browser: Browser,
  options: { width?: number; height?: number; colorScheme?: "light" | "dark" } = {},
): Promise<AppTab> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 900 },
    colorScheme: options.colorScheme ?? "light",
    serviceWorkers: "block",
    acceptDownloads: true,
  });
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
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
  });
  return { page, context, blocked, problems, close: () => context.close() };
}

/** Opens the app and signs in by pasting `key`; resolves once the memories page shows its list. */
export async function signIn(tab: AppTab, appUrl: string, key: string): Promise<void> {
  await tab.page.goto(`${appUrl}/app/`);
  await tab.page.getByRole("textbox", { name: "API key" }).fill(key);
  await tab.page.getByRole("button", { name: "Sign in" }).click();
  await tab.page.locator("#memory-search").waitFor();
  await tab.page.locator(".status-line", { hasText: "newest first" }).waitFor();
}

/** Goes to an app path the way a link does (history, no page load): an in-memory session survives. */
export async function visit(tab: AppTab, path: string): Promise<void> {
  await tab.page.evaluate(
    `history.pushState(null, "", ${JSON.stringify(path)}); dispatchEvent(new PopStateEvent("popstate"))`,
  );
}
