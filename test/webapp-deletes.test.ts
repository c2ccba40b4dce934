import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { buildWebApp, WEB_DIST } from "../scripts/build-app";
import { launchBrowser, openTab, signIn, skipBrowser, visit, type AppTab } from "./helpers/app-browser";
import { startTestServer, type TestServer } from "./helpers/server";

let server: TestServer;
let browser: Browser | undefined;

beforeAll(async () => {
  // Before the server: it reads the build on the first request for /app.
  await buildWebApp(WEB_DIST);
  server = await startTestServer();
  if (!skipBrowser) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.destroy();
});

/** After each browser test: nothing left the machine, no page error, no CSP violation. */
async function closeClean(opened: AppTab): Promise<void> {
  await opened.close();
  expect({ blocked: opened.blocked, problems: opened.problems }).toEqual({ blocked: [], problems: [] });
}

/** A workspace with a document, a note, a chat of two messages, a file and a memory, for `token`'s user. */
async function filled(token: string, name: string) {
  const [, workspace] = await server.call("POST", "/v1/workspaces", { token, body: { name } });
  const ws = `/v1/workspaces/${workspace.id}`;
  const [, doc] = await server.call("POST", `${ws}/documents`, {
    token,
    body: { title: "Budget", markdown: "# Budget\n\nRent and food." },
  });
  const [, note] = await server.call("POST", `${ws}/notes`, {
    token,
    body: { documentPayload: { title: "Receipts" }, blocksPayload: [], markdown: "Keep them." },
  });
  const [, thread] = await server.call("POST", `${ws}/chats`, { token, body: { title: "Taxes" } });
  for (const [role, content] of [
    ["user", "When are taxes due?"],
    ["assistant", "In April."],
  ]) {
    await server.call("POST", `${ws}/chats/${thread.id}/messages`, { token, body: { role, content } });
  }
  const [, issued] = await server.call("POST", `${ws}/files/upload-url`, {
    token,
    body: { filename: "bank.txt", contentType: "text/plain" },
  });
  await fetch(issued.url, { method: "PUT", body: "statement", headers: { "content-type": "text/plain" } });
  await server.call("POST", "/v1/memories", {
    token,
    body: { content: "Taxes are due in April", workspaceId: workspace.id },
  });
  return {
    id: workspace.id as string,
    doc: doc.document.id as string,
    note: note.id as string,
    thread: thread.id as string,
  };
}

describe.skipIf(skipBrowser)("the app renames and deletes what it shows", () => {
  test("workspaces: rename in the list; delete from its page, after a dialog that counts what goes", async () => {
    const token = "mock-token-ines";
    const finance = await filled(token, "Finance");
    const [, other] = await server.call("POST", "/v1/workspaces", { token, body: { name: "Home" } });
    const ines = await openTab(browser!);
    const { page } = ines;
    await signIn(ines, server.url, token);

    await visit(ines, "/app/workspaces");
    await page.getByRole("button", { name: "Rename Finance" }).click();
    const rename = page.getByRole("dialog", { name: "Rename workspace" });
    await rename.getByRole("textbox", { name: "Name" }).fill("Money");
    await rename.getByRole("button", { name: "Rename" }).click();
    await page.getByRole("link", { name: "Money" }).waitFor();
    expect((await server.call("GET", `/v1/workspaces/${finance.id}`, { token }))[1].workspace.name).toBe("Money");

    await visit(ines, `/app/workspaces/${finance.id}`);
    await page.getByRole("button", { name: "Delete workspace" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete workspace" });
    expect(await confirm.locator("p").first().textContent()).toBe(
      "Delete workspace “Money”? Its 2 documents, 1 chat (2 messages), 1 file and 1 memory are deleted for good.",
    );
    // Cancelled: nothing goes.
    await confirm.getByRole("button", { name: "Cancel" }).click();
    expect((await server.call("GET", `/v1/workspaces/${finance.id}`, { token }))[0]).toBe(200);

    await page.getByRole("button", { name: "Delete workspace" }).click();
    await page
      .getByRole("dialog", { name: "Delete workspace" })
      .getByRole("button", { name: "Delete workspace" })
      .click();
    await page
      .locator(".toast", { hasText: "Deleted Money, with 2 documents, 1 chat (2 messages), 1 file and 1 memory." })
      .waitFor();
    await page.getByRole("link", { name: "Home" }).waitFor();
    expect(await page.getByRole("link", { name: "Money" }).count()).toBe(0);
    const [, list] = await server.call("GET", "/v1/workspaces", { token });
    expect(list.map((w: { id: string }) => w.id)).toEqual([other.id]);
    expect((await server.call("GET", "/v1/memories", { token }))[1].data).toEqual([]);
    await closeClean(ines);
  });

  test("chats, documents and notes: rename and delete from their lists and pages", async () => {
    const token = "mock-token-jon";
    const ws = await filled(token, "Research");
    const jon = await openTab(browser!);
    const { page } = jon;
    await signIn(jon, server.url, token);
    const renameTo = async (button: string, dialog: string, label: string, value: string) => {
      await page.getByRole("button", { name: button }).click();
      const opened = page.getByRole("dialog", { name: dialog });
      await opened.getByRole("textbox", { name: label }).fill(value);
      await opened.getByRole("button", { name: "Rename" }).click();
    };
    const confirmIn = async (dialog: string, button: string) =>
      page.getByRole("dialog", { name: dialog }).getByRole("button", { name: button }).click();

    // A chat: renamed in the list, deleted from its page.
    await visit(jon, `/app/workspaces/${ws.id}/chats`);
    await renameTo("Rename Taxes", "Rename chat", "Title", "Tax dates");
    await page.getByRole("link", { name: "Tax dates" }).click();
    await page.getByRole("heading", { name: "Tax dates" }).waitFor();
    await page.getByRole("button", { name: "Delete chat" }).click();
    expect(await page.getByRole("dialog", { name: "Delete chat" }).locator("p").first().textContent()).toBe(
      "Delete chat “Tax dates”? Its 2 messages are deleted for good.",
    );
    await confirmIn("Delete chat", "Delete chat");
    await page.getByText("No chats in this workspace.").waitFor();
    expect((await server.call("GET", `/v1/workspaces/${ws.id}/chats/${ws.thread}/messages`, { token }))[0]).toBe(404);

    // A document: renamed on its page, deleted from the list.
    await visit(jon, `/app/workspaces/${ws.id}/documents/${ws.doc}`);
    await renameTo("Rename document", "Rename document", "Title", "Budget 2025");
    await page.getByRole("heading", { name: "Budget 2025" }).waitFor();
    await visit(jon, `/app/workspaces/${ws.id}/documents`);
    await page.getByRole("button", { name: "Delete Budget 2025" }).click();
    await confirmIn("Delete document", "Delete document");
    await page.getByRole("link", { name: "Budget 2025" }).waitFor({ state: "detached" });
    expect((await server.call("GET", `/v1/workspaces/${ws.id}/documents/${ws.doc}`, { token }))[0]).toBe(404);

    // A note: renamed in the list, then on its page; deleted from the list.
    await visit(jon, `/app/workspaces/${ws.id}/notes`);
    await renameTo("Rename Receipts", "Rename note", "Title", "Old receipts");
    await page.getByRole("link", { name: "Old receipts" }).click();
    await renameTo("Rename note", "Rename note", "Title", "Older receipts");
    await page.getByRole("heading", { name: "Older receipts" }).waitFor();
    expect((await server.call("GET", `/v1/workspaces/${ws.id}/notes/${ws.note}`, { token }))[1].document.title).toBe(
      "Older receipts",
    );
    await visit(jon, `/app/workspaces/${ws.id}/notes`);
    await page.getByRole("button", { name: "Delete Older receipts" }).click();
    await confirmIn("Delete note", "Delete note");
    await page.getByText("No notes in this workspace.").waitFor();
    expect((await server.call("GET", `/v1/workspaces/${ws.id}/notes/${ws.note}`, { token }))[0]).toBe(404);
    await closeClean(jon);
  });
});
