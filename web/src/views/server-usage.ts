/** This month's usage and credits (with a daily chart), and the search index's status. */
import { ApiError, credits, health, usage, usageDaily } from "../api";
import type { DailyUsage, Health } from "../api-types";
import { h, loading, replace, svg } from "../dom";
import { ago, count, time } from "../format";

const CHART = { width: 640, height: 140, gap: 2, bottom: 18 };

/** Bars of tokens per day: the picture is decoration; a table under it holds the numbers. */
function dailyChart(daily: DailyUsage): HTMLElement {
  const days = daily.days;
  const top = Math.max(1, ...days.map((d) => d.totalTokens));
  const slot = CHART.width / Math.max(days.length, 1);
  const plot = CHART.height - CHART.bottom;
  const bars = days.map((day, i) => {
    const height = Math.max(day.totalTokens ? 2 : 0, (day.totalTokens / top) * (plot - 4));
    return svg(
      "rect",
      {
        x: i * slot + CHART.gap / 2,
        y: plot - height,
        width: Math.max(1, slot - CHART.gap),
        height,
        class: "chart-bar",
      },
      svg("title", null, `${day.day}: ${count(day.totalTokens)} tokens, ${count(day.requestCount)} requests`),
    );
  });
  const labels = days
    .filter((_, i) => i === 0 || i === days.length - 1 || i % 7 === 0)
    .map((day) =>
      svg(
        "text",
        { x: days.indexOf(day) * slot + slot / 2, y: CHART.height - 4, class: "chart-label", "text-anchor": "middle" },
        day.day.slice(8),
      ),
    );
  return h(
    "figure",
    { class: "chart" },
    svg(
      "svg",
      { viewBox: `0 0 ${CHART.width} ${CHART.height}`, class: "chart-svg", "aria-hidden": "true" },
      svg("line", { x1: 0, x2: CHART.width, y1: plot, y2: plot, class: "chart-axis" }),
      bars,
      labels,
    ),
    h(
      "figcaption",
      { class: "muted" },
      days.some((d) => d.totalTokens > 0)
        ? `Tokens per day, ${daily.month} (UTC). Highest: ${count(top)}.`
        : `Tokens per day, ${daily.month} (UTC): no completions yet this month.`,
    ),
    h(
      "details",
      null,
      h("summary", null, "Daily numbers"),
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "data-table" },
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              h("th", { scope: "col" }, "Day"),
              h("th", { scope: "col", class: "align-right" }, "Tokens"),
              h("th", { scope: "col", class: "align-right" }, "Requests"),
            ),
          ),
          h(
            "tbody",
            null,
            days.map((d) =>
              h(
                "tr",
                null,
                h("td", null, d.day),
                h("td", { class: "align-right num" }, count(d.totalTokens)),
                h("td", { class: "align-right num" }, count(d.requestCount)),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

function stat(label: string, value: string, detail?: string): HTMLElement {
  return h(
    "div",
    { class: "stat" },
    h("div", { class: "stat-label" }, label),
    h("div", { class: "stat-value num" }, value),
    detail ? h("div", { class: "stat-detail muted" }, detail) : null,
  );
}

export async function usageSection(section: HTMLElement, signal: AbortSignal): Promise<void> {
  const body = h("div", null, loading("Loading usage"));
  section.append(body);
  try {
    const [used, allowance, daily] = await Promise.all([
      usage(signal),
      credits(signal),
      usageDaily(signal).catch((error) => {
        if (error instanceof ApiError && error.notFound) return null;
        throw error;
      }),
    ]);
    const share = allowance.limit > 0 ? Math.min(1, allowance.used / allowance.limit) : 0;
    const meter = h("meter", {
      min: 0,
      max: Math.max(allowance.limit, 1),
      value: allowance.used,
      class: "credit-meter",
      "aria-label": "Tokens used of this month's allowance",
    });
    replace(
      body,
      h(
        "div",
        { class: "stats" },
        stat("Tokens this month", count(used.usage.totalTokens), used.month),
        stat("Completions", count(used.usage.requestCount)),
        stat(
          "Allowance left",
          count(allowance.remaining),
          allowance.limit ? `of ${count(allowance.limit)} (${Math.round(share * 100)}% used)` : "no limit set",
        ),
      ),
      allowance.limit && allowance.used ? meter : null,
      daily ? dailyChart(daily) : h("p", { class: "muted" }, "This server does not report usage per day yet."),
    );
  } catch (error) {
    if (!signal.aborted)
      replace(body, h("div", { class: "notice notice-error", role: "alert" }, (error as Error).message));
  }
}

function lag(info: NonNullable<Health["index"]>): string {
  if (!info.oldestPendingAt) return "none";
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(info.oldestPendingAt)) / 1000));
  return seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} min`;
}

export async function statusSection(section: HTMLElement, signal: AbortSignal): Promise<void> {
  const body = h("div", null, loading("Loading the index status"));
  const refresh = h("button", { type: "button", class: "button button-small" }, "Refresh");
  section.querySelector(".section-header")?.append(refresh);
  section.append(body);
  async function load(): Promise<void> {
    refresh.disabled = true;
    try {
      const info = await health(signal);
      const index = info.index;
      // A credential always gets the index status; only an anonymous /health omits it.
      if (!index) throw new Error("The server did not report the index status.");
      const tone = index.status === "ok" ? "ok" : index.status === "behind" ? "warn" : "bad";
      replace(
        body,
        h(
          "p",
          { class: "status-summary" },
          h("span", { class: `dot dot-${tone}`, "aria-hidden": "true" }),
          index.status === "ok"
            ? "The index keeps up: new memories are searchable within a moment."
            : index.status === "behind"
              ? "The index is behind: recent changes are not searchable yet."
              : "Index writes are failing: changes are kept and indexed once writes succeed.",
        ),
        h(
          "dl",
          { class: "facts facts-grid" },
          h("dt", null, "Status"),
          h("dd", null, index.status),
          h("dt", null, "Lag"),
          h("dd", null, lag(index)),
          h("dt", null, "Waiting for text"),
          h("dd", { class: "num" }, index.pending === null ? "unknown" : count(index.pending)),
          h("dt", null, "Vectors"),
          h(
            "dd",
            null,
            info.vectors?.startsWith("unavailable")
              ? h("span", { class: "error-text" }, info.vectors)
              : (info.vectors ?? "unknown"),
          ),
          h("dt", null, "Waiting for vectors"),
          h("dd", { class: "num" }, index.pendingVectors === null ? "unknown" : count(index.pendingVectors)),
          h("dt", null, "Store"),
          h("dd", null, info.store),
          // The writer's details reach only an operator's credential (a user's counts are their own).
          index.writer === undefined
            ? null
            : [
                h("dt", null, "Last indexed"),
                h(
                  "dd",
                  null,
                  index.lastIndexedAt
                    ? [time(index.lastIndexedAt), ` (${ago(index.lastIndexedAt)})`]
                    : "not on this process",
                ),
                h("dt", null, "Last error"),
                h(
                  "dd",
                  null,
                  index.lastError
                    ? h(
                        "span",
                        { class: "error-text" },
                        index.lastError,
                        index.failingSince
                          ? ` (since ${ago(index.failingSince)}, ${count(index.consecutiveFailures ?? 0)} in a row)`
                          : "",
                      )
                    : "none",
                ),
              ],
        ),
      );
    } catch (error) {
      if (!signal.aborted)
        replace(body, h("div", { class: "notice notice-error", role: "alert" }, (error as Error).message));
    } finally {
      refresh.disabled = false;
    }
  }
  refresh.addEventListener("click", () => void load());
  await load();
}
