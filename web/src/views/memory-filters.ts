/** The memory list's filters: workspace, session, and a date range, kept in the page's query string. */
import type { Memory, MemoryFilters, Workspace } from "../api-types";
import { field, h } from "../dom";

export interface FilterState {
  workspaceId: string;
  session: string;
  /** YYYY-MM-DD, local days. */
  from: string;
  to: string;
}

export const filtersFromQuery = (query: URLSearchParams): FilterState => ({
  workspaceId: query.get("workspace") ?? "",
  session: query.get("session") ?? "",
  from: query.get("from") ?? "",
  to: query.get("to") ?? "",
});

export function filtersToQuery(filters: FilterState, params: URLSearchParams): void {
  const pairs: Array<[string, string]> = [
    ["workspace", filters.workspaceId],
    ["session", filters.session],
    ["from", filters.from],
    ["to", filters.to],
  ];
  for (const [key, value] of pairs) if (value) params.set(key, value);
}

export const activeFilterCount = (f: FilterState) => [f.workspaceId, f.session, f.from, f.to].filter(Boolean).length;

/** The range as ISO times: `from` at the start of its local day, `to` at the end of its. */
function range(f: FilterState): { from?: string; to?: string } {
  const start = f.from ? new Date(`${f.from}T00:00:00`) : null;
  const end = f.to ? new Date(`${f.to}T23:59:59.999`) : null;
  return {
    from: start && !Number.isNaN(start.getTime()) ? start.toISOString() : undefined,
    to: end && !Number.isNaN(end.getTime()) ? end.toISOString() : undefined,
  };
}

/** The list's query parameters (`GET /v1/memories`). */
export const listFilters = (f: FilterState): MemoryFilters => ({
  workspaceId: f.workspaceId || undefined,
  session_id: f.session || undefined,
  ...range(f),
});

/** What search filters on the server; dates are applied to the results here (search has no date filter). */
export const searchFilters = (f: FilterState) =>
  f.workspaceId || f.session
    ? { ...(f.workspaceId ? { workspaceId: f.workspaceId } : {}), ...(f.session ? { session_id: f.session } : {}) }
    : undefined;

export function withinDates(memory: Memory, f: FilterState): boolean {
  const { from, to } = range(f);
  return (!from || memory.createdAt >= from) && (!to || memory.createdAt <= to);
}

/** The collapsible filter form; `onApply` gets the new state. */
export function filterPanel(
  filters: FilterState,
  workspaces: Workspace[],
  onApply: (next: FilterState) => void,
): HTMLDetailsElement {
  const workspace = h(
    "select",
    { name: "workspace" },
    h("option", { value: "" }, "Any workspace"),
    workspaces.map((w) => h("option", { value: w.id }, w.name)),
  );
  workspace.value = filters.workspaceId;
  const session = h("input", { type: "text", name: "session", autocomplete: "off", value: filters.session });
  const from = h("input", { type: "date", name: "from", value: filters.from });
  const to = h("input", { type: "date", name: "to", value: filters.to });
  const count = activeFilterCount(filters);
  const form = h(
    "form",
    { class: "filters-form" },
    field("Workspace", workspace).element,
    field("Session", session).element,
    field("From", from).element,
    field("To", to).element,
    h(
      "div",
      { class: "filters-actions" },
      h("button", { type: "submit", class: "button button-primary button-small" }, "Apply"),
      h(
        "button",
        {
          type: "button",
          class: "button button-small",
          onClick: () => onApply({ workspaceId: "", session: "", from: "", to: "" }),
        },
        "Clear",
      ),
    ),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    onApply({ workspaceId: workspace.value, session: session.value.trim(), from: from.value, to: to.value });
  });
  return h(
    "details",
    { class: "filters", open: count > 0 },
    h("summary", null, count ? `Filters (${count})` : "Filters"),
    form,
  );
}
