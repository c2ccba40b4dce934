import chalk from "chalk";
import type { Command } from "commander";
import { CliError, examples, printJson } from "../output";

/**
 * Where the server is reached: --url, else MNEMO_PUBLIC_URL, else the address `mnemo serve`
 * listens on by default (MNEMO_HOST:MNEMO_PORT, a wildcard host read as this machine).
 */
export function appBaseUrl(urlOption: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const given = urlOption ?? env.MNEMO_PUBLIC_URL;
  if (given) {
    let url: URL | null = null;
    try {
      url = new URL(given);
    } catch {}
    if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash || url.username || url.password) {
      throw new CliError(
        `${urlOption ? "--url" : "MNEMO_PUBLIC_URL"}: '${given}' is not an http(s) URL such as http://127.0.0.1:8787 (no query, fragment or credentials)`,
      );
    }
    return `${url.origin}${url.pathname}`.replace(/\/+$/, "").replace(/\/app$/, "");
  }
  const host = env.MNEMO_HOST && !["0.0.0.0", "::", "[::]"].includes(env.MNEMO_HOST) ? env.MNEMO_HOST : "127.0.0.1";
  return `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${env.MNEMO_PORT || 8787}`;
}

/** A browser can be opened: macOS, or a Linux/BSD desktop session; and a person at a terminal. */
function desktopOpener(): string | null {
  if (!process.stdout.isTTY || process.env.CI) return null;
  if (process.platform === "darwin") return Bun.which("open");
  if (process.platform === "win32") return null;
  return process.env.DISPLAY || process.env.WAYLAND_DISPLAY ? Bun.which("xdg-open") : null;
}

/** `mnemo open --user ID`: a one-time sign-in link to the web app, printed and, on a desktop, opened. */
export function registerOpenCommand(program: Command): void {
  program
    .command("open")
    .description("print (and on a desktop, open) a one-time sign-in link to the web app")
    .requiredOption("--user <id>", "the user the link signs in")
    .option("--data <dir>", "data directory (default: MNEMO_DATA_DIR or ~/.mnemo)")
    .option("--url <url>", "where the server is reached (default: MNEMO_PUBLIC_URL, else http://MNEMO_HOST:MNEMO_PORT)")
    .option("--no-browser", "only print the link")
    .option("--json", "machine-readable output")
    .addHelpText(
      "after",
      `
The link works once and for 5 minutes; its token is in the URL's fragment (#signin=…),
which a browser never sends to a server or in a Referer. The page exchanges it for a
session cookie. A browser is opened only on a desktop and from a terminal.
${examples("mnemo open --user alice", "mnemo open --user alice --url http://127.0.0.1:9000 --no-browser")}`,
    )
    .action(async (options: { user: string; data?: string; url?: string; browser: boolean; json?: boolean }) => {
      if (!options.user.trim()) throw new CliError("--user: must not be empty");
      const base = appBaseUrl(options.url);
      const { openRecordStore } = await import("../../src/record-store");
      const store = await openRecordStore(options.data);
      let link: Awaited<ReturnType<typeof store.appSessions.createLink>>;
      try {
        link = await store.appSessions.createLink(options.user);
      } finally {
        await store.close();
      }
      const url = `${base}/app/#signin=${link.token}`;
      if (options.json) return printJson({ userId: options.user, url, expiresAt: link.expiresAt });
      process.stdout.write(`${url}\n`);
      process.stderr.write(chalk.dim(`sign-in link for ${options.user}: works once, until ${link.expiresAt}\n`));
      const opener = options.browser ? desktopOpener() : null;
      if (opener) Bun.spawn([opener, url], { stdin: "ignore", stdout: "ignore", stderr: "ignore" }).unref();
    });
}
