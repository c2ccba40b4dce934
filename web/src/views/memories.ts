/**
 * Memories: newest first with paging, search as you type (ranked, with scores and the
 * signals that ranked them), filters, add, edit, forget one or many with undo, export.
 */
import { ApiError, listMemories, listWorkspaces, searchMemories } from "../api";
import type { Memory, ScoredMemory, Workspace } from "../api-types";
import { h, replace } from "../dom";
import { count, plural } from "../format";
import { href, type ViewContext } from "../router";
import { MARKS, markMemoriesRendered } from "../session";
import { setTitle } from "../shell";
import { toastError } from "../toast";
import { exportMemories } from "./memories-export";
import { openMemoryEditor } from "./memory-editor";
import {
  activeFilterCount,
  filterPanel,
  filtersFromQuery,
  filtersToQuery,
  listFilters,
  searchFilters,
  withinDates,
} from "./memory-filters";
import { memoryRow } from "./memory-row";
import { forgetMemories, memoryEvents, type MemoryChange } from "./memory-undo";

const PAGE_SIZE = 50;
const SEARCH_LIMIT = 50;
/**
 * Light debounce: a key typed while no search is running searches at once; keys that
 * arrive while one runs (fast typing, key repeat) wait this long and send one request,
 * and the running one, now stale, is aborted.
 */
const SEARCH_DEBOUNCE_MS = 30;

/** What each ranking signal is, as the result line names it. */
const SIGNAL_LABEL: Record<string, string> = {
  text: "keywords",
  words: "word meaning",
  time: "dates",
  vector: "embedding model",
};
const rankedBy = (signals: string[]) => signals.map((signal) => SIGNAL_LABEL[signal] ?? signal).join(" + ");
const newestFirst = (a: Memory, b: Memory) =>
  a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1;

export async function memoriesView({ outlet, signal, query }: ViewContext): Promise<void> {
  setTitle("Memories");
  const state = {
    items: [] as Memory[],
    cursor: null as string | null,
    hasMore: false,
    loaded: false,
    listError: null as string | null,
    results: null as ScoredMemory[] | null,
    searchSignals: [] as string[],
    q: query.get("q") ?? "",
    filters: filtersFromQuery(query),
    selected: new Set<string>(),
    workspaces: [] as Workspace[],
  };
  const workspaceName = (id: string) => state.workspaces.find((w) => w.id === id)?.name ?? id;

  const search = h("input", {
    type: "search",
    id: "memory-search",
    class: "search-input",
    placeholder: "Search memories",
    autocomplete: "off",
    spellcheck: "false",
    "aria-controls": "memory-list",
    "aria-keyshortcuts": "/",
    value: state.q,
  });
  const addButton = h(
    "button",
    { type: "button", id: "add-memory", class: "button button-primary", "aria-keyshortcuts": "n" },
    "Add memory",
  );
  const exportButton = h("button", { type: "button", class: "button" }, "Export");
  const filtersSlot = h("div", { class: "filters-slot" });
  const status = h("p", { class: "status-line", role: "status", "aria-live": "polite" });
  const selectionBar = h("div", { class: "selection-bar", hidden: true });
  const list = h("ul", { id: "memory-list", class: "memory-list", "aria-label": "Memories" });
  const more = h("button", { type: "button", class: "button load-more", hidden: true }, "Load more");
  const selectAll = h("input", { type: "checkbox", class: "row-check", "aria-label": "Select all shown" });

  outlet.append(
    h(
      "div",
      { class: "page-header" },
      h("h1", { tabindex: -1 }, "Memories"),
      h(
        "div",
        { class: "page-actions" },
        h("a", { href: href("/memories/proposals"), class: "button", id: "review-proposals" }, "Review proposals"),
        exportButton,
        addButton,
      ),
    ),
    h(
      "div",
      { class: "toolbar" },
      h(
        "label",
        { class: "search" },
        h("span", { class: "visually-hidden" }, "Search memories"),
        search,
        h("kbd", { class: "search-hint", "aria-hidden": "true" }, "/"),
      ),
      filtersSlot,
    ),
    h("div", { class: "list-header" }, selectAll, status),
    selectionBar,
    list,
    more,
  );

  const shown = (): Memory[] => state.results ?? state.items;

  function renderFilters(): void {
    replace(
      filtersSlot,
      filterPanel(state.filters, state.workspaces, (next) => {
        state.filters = next;
        syncUrl();
        renderFilters();
        void (state.q.trim() ? runSearch() : reload());
      }),
    );
  }

  function syncUrl(): void {
    const params = new URLSearchParams();
    if (state.q.trim()) params.set("q", state.q.trim());
    filtersToQuery(state.filters, params);
    const search = params.toString();
    history.replaceState(null, "", `/app/memories${search ? `?${search}` : ""}`);
  }

  function renderSelection(): void {
    const visible = shown().filter((memory) => state.selected.has(memory.id));
    selectAll.checked = visible.length > 0 && visible.length === shown().length;
    selectAll.indeterminate = visible.length > 0 && visible.length < shown().length;
    selectionBar.hidden = visible.length === 0;
    replace(
      selectionBar,
      h("span", null, `${plural(visible.length, "memory", "memories")} selected`),
      h(
        "button",
        { type: "button", class: "button button-small button-danger", onClick: () => void forget(visible) },
        "Forget selected",
      ),
      h(
        "button",
        {
          type: "button",
          class: "button button-small",
          onClick: () => {
            state.selected.clear();
            render();
          },
        },
        "Clear selection",
      ),
    );
  }

  function describe(): string {
    if (state.results) {
      const by = rankedBy(state.searchSignals);
      return `${plural(state.results.length, "result")} for “${state.q.trim()}”${by ? ` · ranked by ${by}` : ""}`;
    }
    if (state.listError) return state.listError;
    if (!state.loaded) return "Loading memories…";
    const filtered = activeFilterCount(state.filters) ? ", filtered" : "";
    return `${count(state.items.length)}${state.hasMore ? "+" : ""} ${state.items.length === 1 ? "memory" : "memories"}, newest first${filtered}`;
  }

  function render(): void {
    const rows = shown();
    list.setAttribute("aria-label", state.results ? "Search results" : "Memories");
    replace(
      list,
      rows.map((memory) =>
        memoryRow(memory, {
          selected: state.selected.has(memory.id),
          workspaceName,
          onSelect: (checked) => {
            if (checked) state.selected.add(memory.id);
            else state.selected.delete(memory.id);
            list.querySelector(`[data-id="${CSS.escape(memory.id)}"]`)?.classList.toggle("is-selected", checked);
            renderSelection();
          },
          onEdit: () => void openMemoryEditor({ memory, workspaces: state.workspaces }),
          onForget: () => void forget([memory]),
        }),
      ),
    );
    if (state.loaded && rows.length === 0 && !state.listError) {
      list.append(
        h(
          "li",
          { class: "empty" },
          state.results
            ? "No memory matches. Try other words."
            : activeFilterCount(state.filters)
              ? "No memory matches these filters."
              : "Nothing remembered yet. Add a memory, or let your tools write some through the API.",
        ),
      );
    }
    more.hidden = Boolean(state.results) || !state.hasMore;
    status.textContent = describe();
    renderSelection();
  }

  async function forget(memories: Memory[]): Promise<void> {
    const gone = await forgetMemories(memories);
    // Focus stays in the list rather than on a removed button.
    if (gone.length && !list.contains(document.activeElement))
      (list.querySelector<HTMLElement>(".row-check") ?? search).focus();
  }

  function listError(error: unknown): string {
    if (
      error instanceof ApiError &&
      error.status === 400 &&
      /unexpected property/.test(error.message) &&
      activeFilterCount(state.filters)
    ) {
      return "This server cannot filter the list by workspace, session or date yet. Search still honours workspace and session.";
    }
    return error instanceof Error ? error.message : String(error);
  }

  async function loadPage(): Promise<void> {
    more.disabled = true;
    try {
      const page = await listMemories(
        { limit: PAGE_SIZE, cursor: state.cursor ?? undefined, ...listFilters(state.filters) },
        signal,
      );
      state.items.push(...page.data);
      state.cursor = page.nextCursor;
      state.hasMore = page.hasMore;
      state.listError = null;
    } catch (error) {
      if (signal.aborted) return;
      state.listError = listError(error);
    } finally {
      more.disabled = false;
    }
    state.loaded = true;
    if (!state.results) render();
  }

  function reload(): Promise<void> {
    state.items = [];
    state.cursor = null;
    state.hasMore = false;
    state.loaded = false;
    return loadPage();
  }

  let searchTimer: ReturnType<typeof setTimeout> | undefined;
  let searchController: AbortController | null = null;
  let searching = false;
  async function runSearch(): Promise<void> {
    searchController?.abort();
    const q = state.q.trim();
    if (!q) {
      state.results = null;
      return render();
    }
    const controller = new AbortController();
    searchController = controller;
    const abort = () => controller.abort();
    signal.addEventListener("abort", abort, { once: true });
    searching = true;
    try {
      const answer = await searchMemories(
        q,
        { limit: SEARCH_LIMIT, filters: searchFilters(state.filters) },
        controller.signal,
      );
      if (controller.signal.aborted) return;
      performance.mark(MARKS.searchAnswered);
      state.results = answer.results.filter((memory) => withinDates(memory, state.filters));
      state.searchSignals = answer.signals ?? [];
      render();
      performance.mark(MARKS.searchRendered);
      performance.measure("mnemo:search-keystroke-to-results", MARKS.searchInput, MARKS.searchRendered);
      performance.measure("mnemo:search-render", MARKS.searchAnswered, MARKS.searchRendered);
    } catch (error) {
      if (controller.signal.aborted || (error as Error).name === "AbortError") return;
      status.textContent = error instanceof Error ? error.message : String(error);
    } finally {
      signal.removeEventListener("abort", abort);
      if (searchController === controller) searching = false;
    }
  }

  search.addEventListener("input", () => {
    performance.mark(MARKS.searchInput);
    state.q = search.value;
    const waiting = searchTimer !== undefined;
    clearTimeout(searchTimer);
    searchTimer = undefined;
    const run = () => {
      searchTimer = undefined;
      syncUrl();
      void runSearch();
    };
    if (searching || waiting) searchTimer = setTimeout(run, SEARCH_DEBOUNCE_MS);
    else run();
  });
  search.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && search.value) {
      event.preventDefault();
      search.value = "";
      search.dispatchEvent(new Event("input"));
    } else if (event.key === "ArrowDown") {
      event.preventDefault();
      list.querySelector<HTMLElement>(".memory-id")?.focus();
    }
  });
  selectAll.addEventListener("change", () => {
    for (const memory of shown()) selectAll.checked ? state.selected.add(memory.id) : state.selected.delete(memory.id);
    render();
  });
  more.addEventListener("click", () => void loadPage());
  addButton.addEventListener(
    "click",
    () => void openMemoryEditor({ workspaces: state.workspaces, workspaceId: state.filters.workspaceId || undefined }),
  );
  exportButton.addEventListener("click", () => void exportMemories(listFilters(state.filters), exportButton));

  memoryEvents.addEventListener(
    "change",
    (event) => {
      const change = (event as CustomEvent<MemoryChange>).detail;
      if (change.removed) {
        const removed = new Set(change.removed);
        state.items = state.items.filter((memory) => !removed.has(memory.id));
        if (state.results) state.results = state.results.filter((memory) => !removed.has(memory.id));
        for (const id of removed) state.selected.delete(id);
      }
      const arrived = [...(change.restored ?? []), ...(change.added ? [change.added] : [])];
      if (arrived.length) {
        const matches = arrived.filter(
          (memory) =>
            !activeFilterCount(state.filters) ||
            (withinDates(memory, state.filters) &&
              (!state.filters.workspaceId || memory.workspaceId === state.filters.workspaceId) &&
              (!state.filters.session || memory.session_id === state.filters.session)),
        );
        state.items = [...matches, ...state.items.filter((memory) => !arrived.some((a) => a.id === memory.id))].sort(
          newestFirst,
        );
        if (state.results) void runSearch();
      }
      if (change.updated) {
        const updated = change.updated;
        state.items = state.items.map((memory) => (memory.id === updated.id ? updated : memory));
        if (state.results)
          state.results = state.results.map((memory) =>
            memory.id === updated.id ? { ...memory, ...updated } : memory,
          );
      }
      render();
    },
    { signal },
  );

  render();
  renderFilters();
  // The workspace names come alongside; the list does not wait for them.
  void listWorkspaces(undefined, signal).then(
    ({ items }) => {
      state.workspaces = items;
      renderFilters();
      render();
    },
    (error) => signal.aborted || toastError(error),
  );
  if (state.q.trim()) {
    performance.mark(MARKS.searchInput);
    await Promise.all([loadPage(), runSearch()]);
  } else {
    await loadPage();
  }
  if (!signal.aborted) markMemoriesRendered();
}
