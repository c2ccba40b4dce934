/** A workspace's chat threads, each shown as a conversation, renamed or deleted. Messages are text, never markup. */
import { ApiError } from "../api";
import { deleteThread, listMessages, listThreads, renameThread } from "../api-documents";
import type { Message, Thread } from "../api-types";
import { confirmDialog, promptDialog } from "../dialog";
import { empty, h, loading, replace } from "../dom";
import { plural, time } from "../format";
import { href, navigate } from "../router";
import { setTitle } from "../shell";
import { toast, toastError } from "../toast";
import { lockedNotice } from "./encrypted";
import type { TabContext } from "./tab-context";
import { itemActions } from "./item-actions";

const errorNotice = (error: unknown) =>
  h("div", { class: "notice notice-error", role: "alert" }, (error as Error).message);

function bubble(message: Message): HTMLLIElement {
  const who = message.role === "user" ? "You" : "Assistant";
  return h(
    "li",
    { class: `message message-${message.role}` },
    h(
      "div",
      { class: "message-head" },
      h("span", { class: "message-role" }, who),
      h("span", { class: "muted" }, time(message.createdAt)),
    ),
    message.content !== undefined
      ? h("p", { class: "message-text" }, message.content)
      : h("p", { class: "message-text muted" }, "Encrypted message."),
  );
}

/** Asks for a new title, then renames; the new title, or null. */
async function promptRename(workspaceId: string, thread: { id: string; title: string }): Promise<string | null> {
  const title = await promptDialog("Rename chat", "Title", thread.title, { maxLength: 500 });
  if (title === null || title === thread.title) return null;
  try {
    await renameThread(workspaceId, thread.id, title);
    return title;
  } catch (error) {
    toastError(error);
    return null;
  }
}

/** Asks (saying what goes), then deletes; whether the thread was deleted. */
async function confirmDelete(
  workspaceId: string,
  thread: { id: string; title: string; messageCount: number },
): Promise<boolean> {
  const message = `Delete chat “${thread.title}”? Its ${plural(thread.messageCount, "message")} are deleted for good.`;
  if (!(await confirmDialog("Delete chat", message, "Delete chat", true))) return false;
  try {
    await deleteThread(workspaceId, thread.id);
    toast(`Deleted ${thread.title}.`);
    return true;
  } catch (error) {
    toastError(error);
    return false;
  }
}

async function threadPage({ workspace, itemId, container, signal }: TabContext): Promise<void> {
  replace(container, loading("Loading the conversation"));
  try {
    const [threads, messages] = await Promise.all([
      loadAll((cursor) => listThreads(workspace.id, cursor, signal)),
      loadAll((cursor) => listMessages(workspace.id, itemId!, cursor, signal)),
    ]);
    const thread = threads.find((t) => t.id === itemId);
    const title = thread?.title ?? "Conversation";
    setTitle(title, workspace.name);
    const anyLocked = messages.some((message) => message.content === undefined);
    const heading = h("h2", { id: "thread-title" }, title);
    const current = { id: itemId!, title, messageCount: messages.length };
    const actions = h(
      "div",
      { class: "row-actions" },
      itemActions({
        kind: "chat",
        onRename: async () => {
          const renamed = await promptRename(workspace.id, current);
          if (renamed) {
            current.title = renamed;
            heading.textContent = renamed;
            setTitle(renamed, workspace.name);
          }
        },
        onDelete: async () => {
          if (await confirmDelete(workspace.id, current))
            await navigate(`/workspaces/${encodeURIComponent(workspace.id)}/chats`);
        },
      }),
    );
    replace(
      container,
      h("p", { class: "back-link" }, h("a", { href: href("/workspaces", workspace.id, "chats") }, "← All chats")),
      h(
        "header",
        { class: "document-header" },
        heading,
        h("p", { class: "muted" }, plural(messages.length, "message")),
        actions,
      ),
      anyLocked ? lockedNotice("conversation") : null,
      messages.length
        ? h("ol", { class: "conversation", "aria-labelledby": "thread-title" }, messages.map(bubble))
        : empty("No messages yet."),
    );
  } catch (error) {
    if (signal.aborted) return;
    replace(
      container,
      error instanceof ApiError && error.notFound
        ? empty("This conversation does not exist in this workspace.")
        : errorNotice(error),
    );
  }
}

/** Every page of a list that names its next page in X-Next-Cursor (bounded). */
async function loadAll<T>(page: (cursor?: string) => Promise<{ items: T[]; nextCursor: string | null }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 50; pages++) {
    const next = await page(cursor);
    items.push(...next.items);
    if (!next.nextCursor) break;
    cursor = next.nextCursor;
  }
  return items;
}

export async function chatsTab(context: TabContext): Promise<void> {
  if (context.itemId) return threadPage(context);
  const { workspace, container, signal } = context;
  replace(container, loading("Loading chats"));
  try {
    let threads: Thread[] = (await loadAll((cursor) => listThreads(workspace.id, cursor, signal))).reverse();
    const draw = (): void =>
      replace(
        container,
        threads.length
          ? h(
              "ul",
              { class: "entity-list", "aria-label": "Chat threads" },
              threads.map((thread) =>
                h(
                  "li",
                  { class: "entity-row" },
                  h(
                    "div",
                    { class: "entity-main" },
                    h(
                      "a",
                      { href: href("/workspaces", workspace.id, "chats", thread.id), class: "entity-title" },
                      thread.title,
                    ),
                    h("span", { class: "muted" }, plural(thread.messageCount, "message")),
                  ),
                  h("span", { class: "entity-meta" }, "updated ", time(thread.updatedAt)),
                  h(
                    "div",
                    { class: "row-actions" },
                    itemActions({
                      kind: "chat",
                      rowOf: thread.title,
                      onRename: async () => {
                        const title = await promptRename(workspace.id, thread);
                        if (title) {
                          threads = threads.map((t) => (t.id === thread.id ? { ...t, title } : t));
                          draw();
                        }
                      },
                      onDelete: async () => {
                        if (await confirmDelete(workspace.id, thread)) {
                          threads = threads.filter((t) => t.id !== thread.id);
                          draw();
                        }
                      },
                    }),
                  ),
                ),
              ),
            )
          : empty(
              "No chats in this workspace.",
              h("p", { class: "muted" }, "Conversations held through the chat API appear here."),
            ),
      );
    draw();
  } catch (error) {
    if (!signal.aborted) replace(container, errorNotice(error));
  }
}
