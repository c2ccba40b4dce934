/** One memory: its text, metadata, where it came from, its history. */
import { ApiError, getMemory, listWorkspaces, memoryHistory } from "../api";
import type { Memory, MemoryVersion, Workspace } from "../api-types";
import { empty, h, loading, replace } from "../dom";
import { prettyJson, time } from "../format";
import { href, navigate, type ViewContext } from "../router";
import { setTitle } from "../shell";
import { openMemoryEditor } from "./memory-editor";
import { forgetMemories, memoryEvents, type MemoryChange } from "./memory-undo";

/**
 * Where the memory came from: the source its history recorded for its creation (what the
 * History panel says as "from …").
 */
function sourceOf(versions: MemoryVersion[] | null): string | null {
  const created = versions?.find((version) => version.event === "created") ?? versions?.[0];
  return created?.source ?? null;
}

function provenance(memory: Memory, workspaces: Workspace[], versions: MemoryVersion[] | null): HTMLElement {
  const workspace = memory.workspaceId ? workspaces.find((w) => w.id === memory.workspaceId) : null;
  const source = sourceOf(versions);
  const rows: Array<[string, Node | string]> = [
    ["Id", h("span", { class: "mono" }, memory.id)],
    [
      "Workspace",
      memory.workspaceId
        ? h("a", { href: href("/workspaces", memory.workspaceId) }, workspace?.name ?? memory.workspaceId)
        : "None",
    ],
    ["Session", memory.session_id ?? "None"],
    ["Source", source ?? "Not recorded"],
    ["Created", time(memory.createdAt)],
    ["Updated", time(memory.updatedAt)],
  ];
  return h(
    "dl",
    { class: "facts" },
    rows.map(([term, value]) => [h("dt", null, term), h("dd", null, value)]),
  );
}

function historyList(versions: MemoryVersion[]): HTMLElement {
  if (!versions.length) return h("p", { class: "muted" }, "No earlier versions.");
  return h(
    "ol",
    { class: "history", reversed: true },
    [...versions]
      .sort((a, b) => b.version - a.version)
      .map((version) =>
        h(
          "li",
          { class: "history-item" },
          h(
            "div",
            { class: "history-head" },
            h("strong", null, `Version ${version.version}`),
            h("span", { class: "muted" }, " · ", version.reason, version.source ? ` · from ${version.source}` : ""),
            h("span", { class: "history-time" }, time(version.changedAt)),
          ),
          h("p", { class: "memory-content" }, version.content),
          Object.keys(version.metadata ?? {}).length
            ? h("pre", { class: "code-block" }, prettyJson(version.metadata))
            : null,
        ),
      ),
  );
}

export async function memoryDetailView({ outlet, params, signal }: ViewContext): Promise<void> {
  setTitle("Memory");
  const heading = h("h1", { tabindex: -1 }, "Memory");
  const body = h("div", { class: "detail" }, loading("Loading the memory"));
  outlet.append(
    h("nav", { class: "breadcrumbs", "aria-label": "Breadcrumbs" }, h("a", { href: href("/memories") }, "Memories")),
    h("div", { class: "page-header" }, heading),
    body,
  );

  let memory: Memory;
  let workspaces: Workspace[] = [];
  // Fetched with the memory, so that the source shown comes from it from the first draw.
  let versions: MemoryVersion[] | null = null;
  try {
    [memory, workspaces, versions] = await Promise.all([
      getMemory(params.id, signal),
      listWorkspaces(undefined, signal).then(
        (page) => page.items,
        () => [],
      ),
      memoryHistory(params.id, signal).then(
        (history) => history.data,
        () => null,
      ),
    ]);
  } catch (error) {
    if (signal.aborted) return;
    replace(
      body,
      error instanceof ApiError && error.notFound
        ? empty(
            "This memory does not exist, or it was forgotten.",
            h("a", { href: href("/memories") }, "Back to memories"),
          )
        : h("div", { class: "notice notice-error", role: "alert" }, (error as Error).message),
    );
    return;
  }

  const historySection = h(
    "section",
    { class: "panel", "aria-labelledby": "history-heading", hidden: true },
    h("h2", { id: "history-heading" }, "History"),
    loading("Loading history"),
  );

  const draw = () => {
    setTitle("Memory", memory.id);
    replace(
      body,
      h(
        "div",
        { class: "detail-actions" },
        h(
          "button",
          { type: "button", class: "button", onClick: () => void openMemoryEditor({ memory, workspaces }) },
          "Edit",
        ),
        h(
          "button",
          {
            type: "button",
            class: "button button-danger",
            onClick: async () => {
              if ((await forgetMemories([memory])).length) await navigate("/memories");
            },
          },
          "Forget",
        ),
      ),
      h(
        "section",
        { class: "panel", "aria-labelledby": "content-heading" },
        h("h2", { id: "content-heading", class: "visually-hidden" }, "Content"),
        h("p", { class: "memory-content memory-content-full" }, memory.content),
      ),
      h(
        "div",
        { class: "detail-grid" },
        h(
          "section",
          { class: "panel", "aria-labelledby": "origin-heading" },
          h("h2", { id: "origin-heading" }, "Where it came from"),
          provenance(memory, workspaces, versions),
        ),
        h(
          "section",
          { class: "panel", "aria-labelledby": "metadata-heading" },
          h("h2", { id: "metadata-heading" }, "Metadata"),
          Object.keys(memory.metadata).length
            ? h("pre", { class: "code-block" }, prettyJson(memory.metadata))
            : h("p", { class: "muted" }, "None."),
        ),
      ),
      historySection,
    );
  };
  draw();

  memoryEvents.addEventListener(
    "change",
    (event) => {
      const change = (event as CustomEvent<MemoryChange>).detail;
      if (change.updated?.id === memory.id) {
        memory = change.updated;
        draw();
        void loadHistory();
      }
    },
    { signal },
  );

  function showHistory(data: MemoryVersion[]): void {
    replace(historySection, h("h2", { id: "history-heading" }, "History"), historyList(data));
    historySection.hidden = false;
  }

  async function loadHistory(): Promise<void> {
    try {
      versions = (await memoryHistory(memory.id, signal)).data;
      draw();
      showHistory(versions);
    } catch (error) {
      // The memory is gone (404): the panel stays hidden.
      if (!(error instanceof ApiError && error.notFound) && !signal.aborted) {
        replace(
          historySection,
          h("h2", { id: "history-heading" }, "History"),
          h("p", { class: "muted" }, (error as Error).message),
        );
        historySection.hidden = false;
      }
    }
  }
  if (versions) showHistory(versions);
  else await loadHistory();
}
