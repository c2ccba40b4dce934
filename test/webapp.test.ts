import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { APP_FILES, buildWebApp, JS_BUDGET_GZIP_BYTES, WEB_DIST, type BuiltApp } from "../scripts/build-app";
import { APP_CSP } from "../src/web-app/assets";
import { launchBrowser, openTab, signIn, skipBrowser, visit, type AppTab } from "./helpers/app-browser";
import { startTestServer, type TestServer } from "./helpers/server";

const XSS_IMG = "<img src=x onerror=window.__xss=1>";
const XSS_LINK = "[x](javascript:window.__xss=1)";

let server: TestServer;
/** The server itself serves the app at /app (src/web-app), embedding web/dist: built first. */
let app: { url: string };
let built: BuiltApp;
let browser: Browser | undefined;
const distDir = WEB_DIST;
const shotsDir = mkdtempSync(join(tmpdir(), "mnemo-app-shots-"));
const tabs: AppTab[] = [];

beforeAll(async () => {
  // Before the server: it reads the build on the first request for /app.
  built = await buildWebApp(distDir);
  server = await startTestServer();
  app = { url: server.url };
  if (!skipBrowser) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.destroy();
});

async function tab(options?: Parameters<typeof openTab>[1]): Promise<AppTab> {
  const opened = await openTab(browser!, options);
  tabs.push(opened);
  return opened;
}

/** After each browser test: nothing left the machine, no page error, no CSP violation. */
async function closeClean(opened: AppTab): Promise<void> {
  await opened.close();
  expect({ blocked: opened.blocked, problems: opened.problems }).toEqual({ blocked: [], problems: [] });
}

const source = (dir: string): Array<[string, string]> =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => [
      join(entry.parentPath, entry.name).slice(dir.length + 1),
      readFileSync(join(entry.parentPath, entry.name), "utf8"),
    ]);

describe("the app's build", () => {
  test("is three files with stable names, its script within budget, its page free of inline script and style", () => {
    expect(readdirSync(distDir).sort()).toEqual([...APP_FILES].sort());
    expect(built.jsGzipBytes).toBeLessThan(JS_BUDGET_GZIP_BYTES);
    const html = readFileSync(join(distDir, "index.html"), "utf8");
    expect({
      inlineScripts: html.match(/<script(?![^>]*\bsrc=)[^>]*>/g),
      styleElements: html.match(/<style/g),
      styleAttributes: html.match(/\sstyle=/g),
      handlers: html.match(/\son[a-z]+=/g),
      externalUrls: html.match(/\b(https?:)?\/\/[^\s"'<>]+/g),
    }).toEqual({ inlineScripts: null, styleElements: null, styleAttributes: null, handlers: null, externalUrls: null });
  });

  test("the source never builds markup from strings, evaluates text, or calls the network outside api.ts", () => {
    const files = source(join(import.meta.dir, "..", "web", "src"));
    const offenders = (pattern: RegExp, allowed: string[] = []) =>
      files.filter(([name, text]) => pattern.test(text) && !allowed.includes(name)).map(([name]) => name);
    expect({
      markupFromStrings: offenders(
        /\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment/,
      ),
      evaluation: offenders(/\beval\(|new Function\(|setTimeout\(\s*["'`]/),
      network: offenders(/\bfetch\(|XMLHttpRequest|WebSocket|EventSource|sendBeacon/, ["api.ts"]),
      storage: offenders(/sessionStorage|document\.cookie|indexedDB/),
      localStorage: offenders(/localStorage/, ["theme.ts"]),
    }).toEqual({ markupFromStrings: [], evaluation: [], network: [], storage: [], localStorage: [] });
  });
});

describe.skipIf(skipBrowser)("the app in headless Chromium", () => {
  test("serves every /app path under the strict CSP", async () => {
    for (const path of ["/app/", "/app/memories", "/app/app.js"]) {
      const response = await fetch(app.url + path);
      expect([path, response.status, response.headers.get("content-security-policy")]).toEqual([path, 200, APP_CSP]);
    }
  });

  test("the memory journey: add, find as you type, edit, forget, undo; forget many, undo with u", async () => {
    const alice = await tab();
    const { page } = alice;
    await signIn(alice, app.url, "mock-token-alice");

    await page.getByRole("button", { name: "Add memory" }).click();
    const dialog = page.getByRole("dialog", { name: "New memory" });
    await dialog.getByRole("textbox", { name: "Content" }).fill("The blue heron nests by the old mill");
    await dialog.getByRole("textbox", { name: "Metadata" }).fill('{"topic": "birds"}');
    await dialog.getByRole("button", { name: "Add memory" }).click();
    await dialog.waitFor({ state: "detached" });
    const row = page.locator(".memory-row", { hasText: "The blue heron nests by the old mill" });
    await row.waitFor();
    const id = (await row.getAttribute("data-id"))!;
    const [, created] = await server.call("GET", `/v1/memories/${id}`);

    // Typed key by key, never submitted: results follow the typing.
    await page.locator("#memory-search").pressSequentially("heron");
    await page.locator(".status-line", { hasText: "1 result for “heron”" }).waitFor();
    expect(await row.locator(".bar-score .bar-value").textContent()).toMatch(/^\d\.\d{3}$/);

    await row.getByRole("button", { name: /^Edit/ }).click();
    const editor = page.getByRole("dialog", { name: "Edit memory" });
    await editor.getByRole("textbox", { name: "Content" }).fill("The blue heron nests by the new mill");
    await editor.getByRole("textbox", { name: "Metadata" }).fill('{"topic": "birds", "checked": true}');
    await editor.getByRole("button", { name: "Save changes" }).click();
    await editor.waitFor({ state: "detached" });
    await page.locator(".toast", { hasText: "Memory saved." }).waitFor();
    const editedRow = page.locator(`.memory-row[data-id="${id}"]`, { hasText: "by the new mill" });
    await editedRow.waitFor();
    const [, edited] = await server.call("GET", `/v1/memories/${id}`);
    expect([edited.content, edited.metadata, edited.createdAt]).toEqual([
      "The blue heron nests by the new mill",
      { topic: "birds", checked: true },
      created.createdAt,
    ]);

    await editedRow.getByRole("button", { name: /^Forget/ }).click();
    await editedRow.waitFor({ state: "detached" });
    expect((await server.call("GET", `/v1/memories/${id}`))[0]).toBe(404);
    await page.locator(".toast", { hasText: "Forgot 1 memory." }).getByRole("button", { name: "Undo" }).click();
    await page.locator(".toast", { hasText: "Restored 1 memory." }).waitFor();
    const [status, restored] = await server.call("GET", `/v1/memories/${id}`);
    expect([status, restored.content, restored.metadata, restored.workspaceId, restored.session_id]).toEqual([
      200,
      edited.content,
      edited.metadata,
      null,
      null,
    ]);

    const [, river] = await server.call("POST", "/v1/workspaces", { body: { name: "River" } });
    const [, first] = await server.call("POST", "/v1/memories", {
      body: { content: "Otters hold hands while they sleep", workspaceId: river.id, session_id: "s1" },
    });
    const [, second] = await server.call("POST", "/v1/memories", {
      body: { content: "Otters keep a favourite stone" },
    });
    // Away and back: the list is fetched again and shows them.
    await page.locator("#memory-search").fill("");
    await page.getByRole("link", { name: "Workspaces", exact: true }).click();
    await page.getByRole("heading", { name: "Workspaces" }).waitFor();
    await page.getByRole("link", { name: "Memories", exact: true }).click();
    for (const memory of [first, second]) await page.locator(`.memory-row[data-id="${memory.id}"] .row-check`).check();
    await page.getByRole("button", { name: "Forget selected" }).click();
    await page.locator(".toast", { hasText: "Forgot 2 memories." }).waitFor();
    expect([
      (await server.call("GET", `/v1/memories/${first.id}`))[0],
      (await server.call("GET", `/v1/memories/${second.id}`))[0],
    ]).toEqual([404, 404]);
    await page.locator("h1").focus();
    await page.keyboard.press("u");
    await page.locator(".toast", { hasText: "Restored 2 memories." }).waitFor();
    const [, back] = await server.call("GET", `/v1/memories/${first.id}`);
    expect([back.content, back.workspaceId, back.session_id]).toEqual([first.content, river.id, "s1"]);
    expect(await page.locator(`.memory-row[data-id="${second.id}"]`).count()).toBe(1);
    await closeClean(alice);
  });

  test("the memory list filters by workspace, session and day on the server, and the filter form applies them", async () => {
    const token = "mock-token-uma";
    const [, ws] = await server.call("POST", "/v1/workspaces", { token, body: { name: "Kitchen" } });
    const [, inWs] = await server.call("POST", "/v1/memories", {
      token,
      body: { content: "Sourdough starter lives in the fridge", workspaceId: ws.id },
    });
    const [, inSession] = await server.call("POST", "/v1/memories", {
      token,
      body: { content: "Talked about the oven timer", session_id: "call-7" },
    });
    await server.call("POST", "/v1/memories", { token, body: { content: "Unfiled thought about tea" } });
    const uma = await tab();
    const { page } = uma;
    await signIn(uma, app.url, token);
    const shown = async () =>
      page.locator(".memory-row").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-id")));
    await visit(uma, `/app/memories?workspace=${ws.id}`);
    await page.locator(".status-line", { hasText: "1 memory" }).waitFor();
    expect(await shown()).toEqual([inWs.id]);
    await visit(uma, "/app/memories?session=call-7");
    await page.locator(".status-line", { hasText: "1 memory" }).waitFor();
    expect(await shown()).toEqual([inSession.id]);
    await visit(uma, "/app/memories?to=2000-01-01");
    await page.locator(".status-line", { hasText: "0 memories" }).waitFor();
    // The filter form, from an unfiltered list.
    await visit(uma, "/app/memories");
    await page.locator(".status-line", { hasText: "3 memories" }).waitFor();
    await page.locator("summary", { hasText: "Filters" }).click();
    await page.getByRole("combobox", { name: "Workspace" }).selectOption(ws.id);
    await page.getByRole("button", { name: "Apply" }).click();
    await page.locator(".status-line", { hasText: "1 memory" }).waitFor();
    expect(await shown()).toEqual([inWs.id]);
    await closeClean(uma);
  });

  test("stored markup and javascript: links show as text in memories, documents, notes and chats", async () => {
    const token = "mock-token-mallory";
    const payload = `Look ${XSS_IMG} and ${XSS_LINK}`;
    const [, memory] = await server.call("POST", "/v1/memories", {
      token,
      body: { content: payload, metadata: { note: XSS_IMG } },
    });
    const [, workspace] = await server.call("POST", "/v1/workspaces", { token, body: { name: "Hostile" } });
    const ws = `/v1/workspaces/${workspace.id}`;
    const [, doc] = await server.call("POST", `${ws}/documents`, {
      token,
      body: {
        title: "Hostile doc",
        markdown: `# Title\n\n${payload}\n\n${XSS_IMG}\n\n- ${XSS_LINK}\n\n[ok](https://example.org)`,
      },
    });
    const [, note] = await server.call("POST", `${ws}/notes`, {
      token,
      body: { documentPayload: { title: "Hostile note" }, blocksPayload: [], markdown: payload },
    });
    const [, thread] = await server.call("POST", `${ws}/chats`, { token, body: { title: "Hostile chat" } });
    await server.call("POST", `${ws}/chats/${thread.id}/messages`, { token, body: { role: "user", content: payload } });

    const mallory = await tab();
    const { page } = mallory;
    await signIn(mallory, app.url, token);
    const pages: Array<[string, string]> = [
      [`/app/memories`, ".memory-content"],
      [`/app/memories/${memory.id}`, ".memory-content"],
      [`/app/workspaces/${workspace.id}/documents/${doc.document.id}`, ".markdown-body"],
      [`/app/workspaces/${workspace.id}/notes/${note.id}`, ".markdown-body"],
      [`/app/workspaces/${workspace.id}/chats/${thread.id}`, ".message-text"],
    ];
    for (const [path, selector] of pages) {
      await visit(mallory, path);
      const content = page.locator(selector).first();
      await content.filter({ hasText: XSS_IMG }).waitFor();
      expect([path, await content.textContent()]).toEqual([path, expect.stringContaining(XSS_LINK)]);
      const dangerous = await page.evaluate(
        `[document.querySelectorAll("main img, main iframe, main script, main object").length, document.querySelectorAll("a[href^='javascript' i]").length, typeof window.__xss]`,
      );
      expect([path, dangerous]).toEqual([path, [0, 0, "undefined"]]);
    }
    // A safe link stays a link.
    await visit(mallory, `/app/workspaces/${workspace.id}/documents/${doc.document.id}`);
    expect(await page.locator(".markdown-body a", { hasText: "ok" }).getAttribute("href")).toBe("https://example.org");
    await closeClean(mallory);
  });

  test("a second user never sees the first's memories, workspaces or documents", async () => {
    const [, secret] = await server.call("POST", "/v1/memories", {
      token: "mock-token-carol",
      body: { content: "Carol's locker code is 4312" },
    });
    const [, workspace] = await server.call("POST", "/v1/workspaces", {
      token: "mock-token-carol",
      body: { name: "Carol's diary" },
    });
    const dave = await tab();
    const { page } = dave;
    await signIn(dave, app.url, "mock-token-dave");
    await page.getByText("Nothing remembered yet.").waitFor();
    await page.locator("#memory-search").pressSequentially("locker");
    await page.locator(".status-line", { hasText: "0 results for “locker”" }).waitFor();
    await visit(dave, `/app/memories/${secret.id}`);
    await page.getByText("This memory does not exist, or it was forgotten.").waitFor();
    await page.getByRole("link", { name: "Workspaces", exact: true }).click();
    await page.getByText("No workspaces yet.").waitFor();
    await visit(dave, `/app/workspaces/${workspace.id}/documents`);
    await page.getByRole("heading", { name: "Workspace not found" }).waitFor();
    expect(await page.locator("body").textContent()).not.toMatch(/4312|Carol's diary/);
    await closeClean(dave);
  });

  test("after sign-out, the next user in the same tab cannot undo the first one's forget into their own account", async () => {
    const [, memory] = await server.call("POST", "/v1/memories", {
      token: "mock-token-ivan",
      body: { content: "Ivan's spare key is under the blue pot" },
    });
    const shared = await tab();
    const { page } = shared;
    await signIn(shared, app.url, "mock-token-ivan");
    await page
      .locator(`.memory-row[data-id="${memory.id}"]`)
      .getByRole("button", { name: /^Forget/ })
      .click();
    await page.locator(".toast", { hasText: "Forgot 1 memory." }).waitFor();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("textbox", { name: "API key" }).fill("mock-token-judy");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator(".status-line", { hasText: "newest first" }).waitFor();
    expect(await page.locator(".toast", { hasText: "Forgot" }).count()).toBe(0);
    await page.locator("h1").focus();
    await page.keyboard.press("u");
    await page.locator(".toast", { hasText: "Nothing to undo." }).waitFor();
    expect([
      (await server.call("GET", "/v1/memories", { token: "mock-token-judy" }))[1].data,
      (await server.call("GET", `/v1/memories/${memory.id}`, { token: "mock-token-ivan" }))[0],
    ]).toEqual([[], 404]);
    await closeClean(shared);
  });

  test("works from the keyboard: skip link, visible focus, / to search, dialogs close on Escape and return focus", async () => {
    const erin = await tab();
    const { page } = erin;
    await signIn(erin, app.url, "mock-token-erin");
    const active = (): Promise<string[]> =>
      page.evaluate(
        `[document.activeElement.tagName, document.activeElement.id || document.activeElement.textContent.trim().slice(0, 40), getComputedStyle(document.activeElement).outlineStyle]`,
      );
    await page.keyboard.press("Tab");
    expect(await active()).toEqual(["A", "Skip to content", "solid"]);
    await page.keyboard.press("Enter");
    expect((await active()).slice(0, 2)).toEqual(["H1", "Memories"]);
    await page.keyboard.press("/");
    expect((await active()).slice(0, 2)).toEqual(["INPUT", "memory-search"]);

    await page.getByRole("button", { name: "Add memory" }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("dialog", { name: "New memory" }).waitFor();
    expect((await active()).slice(0, 1)).toEqual(["TEXTAREA"]);
    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "detached" });
    expect(await active()).toEqual(["BUTTON", "add-memory", "solid"]);

    await page.keyboard.press("?");
    await page.getByRole("dialog", { name: "Keyboard shortcuts" }).waitFor();
    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "detached" });
    await page.keyboard.press("g");
    await page.keyboard.press("w");
    await page.getByRole("heading", { name: "Workspaces" }).waitFor();
    expect((await active()).slice(0, 2)).toEqual(["H1", "Workspaces"]);
    expect(await page.getByRole("link", { name: "Workspaces", exact: true }).getAttribute("aria-current")).toBe("page");
    await closeClean(erin);
  });

  test("files: upload through a presigned URL (XMLHttpRequest, for progress), download, delete", async () => {
    const token = "mock-token-gina";
    const [, workspace] = await server.call("POST", "/v1/workspaces", { token, body: { name: "Papers" } });
    const gina = await tab();
    const { page } = gina;
    await signIn(gina, app.url, token);
    await visit(gina, `/app/workspaces/${workspace.id}/files`);
    await page.getByText("No files yet.").waitFor();
    await page.locator("#file-picker").setInputFiles({
      name: "field notes.txt",
      mimeType: "text/plain",
      buffer: Buffer.from("heron, otter, kingfisher"),
    });
    await page.locator(".toast", { hasText: "Uploaded field notes.txt (24 B)." }).waitFor();
    const [, listed] = await server.call("GET", `/v1/workspaces/${workspace.id}/files`, { token });
    expect(listed.files.map((f: { name: string; size: number; type: string }) => [f.name, f.size, f.type])).toEqual([
      ["field notes.txt", 24, "text/plain"],
    ]);

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download field notes.txt" }).click(),
    ]);
    expect([download.suggestedFilename(), readFileSync((await download.path())!, "utf8")]).toEqual([
      "field notes.txt",
      "heron, otter, kingfisher",
    ]);

    await page.getByRole("button", { name: "Delete field notes.txt" }).click();
    await page.getByRole("dialog", { name: "Delete file" }).getByRole("button", { name: "Delete" }).click();
    await page.getByText("No files yet.").waitFor();
    expect((await server.call("GET", `/v1/workspaces/${workspace.id}/files`, { token }))[1].files).toEqual([]);
    await closeClean(gina);
  });

  test("encrypted documents and messages open with a client key held only by the tab", async () => {
    const token = "mock-token-hana";
    const clientKey = "5e".repeat(32);
    const [, workspace] = await server.call("POST", "/v1/workspaces", { token, body: { name: "Vault" } });
    const ws = `/v1/workspaces/${workspace.id}`;
    const [, doc] = await server.call("POST", `${ws}/documents`, {
      token,
      body: { title: "Sealed plan", markdown: "The **vault** opens at dawn", clientKey },
    });
    const [, thread] = await server.call("POST", `${ws}/chats`, { token, body: { title: "Sealed chat" } });
    await server.call("POST", `${ws}/chats/${thread.id}/messages`, {
      token,
      body: { role: "user", content: "the code is 8841", client_key: clientKey },
    });
    expect((await server.call("GET", `${ws}/documents/${doc.document.id}`, { token }))[1].markdown).not.toContain(
      "vault",
    );

    const hana = await tab();
    const { page } = hana;
    await signIn(hana, app.url, token);
    await visit(hana, `/app/workspaces/${workspace.id}/documents/${doc.document.id}`);
    await page.getByText("This document is encrypted.").waitFor();
    await visit(hana, `/app/workspaces/${workspace.id}/chats/${thread.id}`);
    await page.getByText("Encrypted message.").waitFor();

    await page.getByRole("link", { name: "Your server", exact: true }).click();
    await page.getByRole("textbox", { name: "Client key" }).fill(clientKey);
    await page.getByRole("button", { name: "Use key" }).click();
    await page.getByText("shown decrypted with your key").waitFor();
    await visit(hana, `/app/workspaces/${workspace.id}/documents/${doc.document.id}`);
    expect(await page.locator(".markdown-body strong").filter({ hasText: "vault" }).textContent()).toBe("vault");
    await visit(hana, `/app/workspaces/${workspace.id}/chats/${thread.id}`);
    await page.locator(".message-text", { hasText: "the code is 8841" }).waitFor();
    const stored = await page.evaluate(
      "JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage), document.cookie])",
    );
    expect(stored).not.toContain(clientKey);
    await closeClean(hana);
  });

  test("fits 360 and 1440 px in light and dark (screenshots kept for a look)", async () => {
    const [, workspace] = await server.call("POST", "/v1/workspaces", {
      token: "mock-token-frank",
      body: { name: "Garden" },
    });
    for (const content of [
      "Tomatoes need staking by mid June",
      "The rhubarb patch is by the north fence; divide it every five years",
      "Neighbour Ingrid lends the long ladder",
    ]) {
      await server.call("POST", "/v1/memories", {
        token: "mock-token-frank",
        body: { content, workspaceId: workspace.id, metadata: { topic: "garden" } },
      });
    }
    await server.call("POST", `/v1/workspaces/${workspace.id}/documents`, {
      token: "mock-token-frank",
      body: {
        title: "Planting plan",
        markdown: "# Beds\n\n| Bed | Crop |\n|---|---|\n| 1 | Tomatoes |\n\nSee [[Compost]].\n\n```\nwater: daily\n```",
      },
    });
    const overflow: string[] = [];
    for (const colorScheme of ["light", "dark"] as const) {
      for (const width of [360, 1440]) {
        const frank = await tab({ width, height: 900, colorScheme });
        const { page } = frank;
        await signIn(frank, app.url, "mock-token-frank");
        const shoot = async (name: string) => {
          const wide = await page.evaluate("document.documentElement.scrollWidth");
          if ((wide as number) > width) overflow.push(`${name} ${colorScheme} ${width}: ${wide}px`);
          await page.screenshot({ path: join(shotsDir, `${name}-${colorScheme}-${width}.png`), fullPage: true });
        };
        await shoot("memories");
        await page.locator("#memory-search").pressSequentially("rhubarb");
        await page.locator(".status-line", { hasText: "1 result" }).waitFor();
        await shoot("search");
        await visit(frank, `/app/workspaces/${workspace.id}/documents`);
        await page.getByRole("link", { name: "Planting plan" }).click();
        await page.locator(".markdown-body table").waitFor();
        await shoot("document");
        await page.getByRole("link", { name: "Your server", exact: true }).click();
        await page.locator(".status-summary").waitFor();
        await shoot("server");
        await closeClean(frank);
      }
    }
    console.log(`screenshots: ${shotsDir}`);
    expect(overflow).toEqual([]);
  });
});
