/** Memory extraction: captured conversations whose extraction failed or is failing, each with why and a retry. */
import { extractionJobs, retryExtractionJob } from "../api";
import type { ExtractionJob } from "../api-types";
import { h, loading, replace } from "../dom";
import { ago, count, time } from "../format";
import { toast } from "../toast";

const STATUS_LABEL: Record<ExtractionJob["status"], string> = {
  pending: "Pending",
  running: "Running",
  retrying: "Retrying",
  done: "Done",
  failed: "Failed",
};

/** What happens next to a job, in words. */
function next(job: ExtractionJob): string {
  if (!job.captured) return "The conversation could not be stored, so there is nothing to retry.";
  if (job.status === "retrying" && job.nextAttemptAt)
    return `Tried ${count(job.attempts)} ${job.attempts === 1 ? "time" : "times"}; next attempt ${Date.parse(job.nextAttemptAt) > Date.now() ? `at ${new Date(job.nextAttemptAt).toLocaleTimeString()}` : "soon"}.`;
  if (job.status === "failed") return `Gave up after ${count(job.attempts)} attempts.`;
  return "";
}

function jobRow(job: ExtractionJob, onRetry: (job: ExtractionJob, button: HTMLButtonElement) => void): HTMLElement {
  const retry = job.retryable
    ? h("button", { type: "button", class: "button button-small", "aria-label": `Retry job ${job.id}` }, "Retry")
    : null;
  retry?.addEventListener("click", () => onRetry(job, retry));
  return h(
    "tr",
    { "data-id": job.id, class: "job-row" },
    h("td", null, h("span", { class: `chip job-${job.status}` }, STATUS_LABEL[job.status])),
    h("td", null, h("span", { class: "error-text" }, job.lastError ?? ""), h("div", { class: "muted" }, next(job))),
    h("td", { class: "mono" }, job.threadId),
    h("td", null, time(job.updatedAt), ` (${ago(job.updatedAt)})`),
    h("td", { class: "align-right" }, retry),
  );
}

export async function jobsSection(section: HTMLElement, signal: AbortSignal): Promise<void> {
  const body = h("div", null, loading("Loading extraction jobs"));
  section.append(body);
  async function load(): Promise<void> {
    try {
      const { data } = await extractionJobs(signal);
      const troubled = data.filter((job) => job.status === "failed" || job.status === "retrying");
      const waiting = data.filter((job) => job.status === "pending" || job.status === "running").length;
      const summary = h(
        "p",
        { class: "status-line", role: "status" },
        troubled.length
          ? `${count(troubled.length)} ${troubled.length === 1 ? "job needs" : "jobs need"} attention.`
          : "No failed extraction jobs.",
        waiting ? ` ${count(waiting)} waiting to run.` : "",
      );
      if (!troubled.length) return replace(body, summary);
      replace(
        body,
        summary,
        h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { class: "data-table", "aria-label": "Failed and failing extraction jobs" },
            h(
              "thead",
              null,
              h(
                "tr",
                null,
                ["Status", "Why", "Thread", "Last change", ""].map((label) => h("th", { scope: "col" }, label)),
              ),
            ),
            h(
              "tbody",
              null,
              troubled.map((job) => jobRow(job, retry)),
            ),
          ),
        ),
      );
    } catch (error) {
      if (signal.aborted) return;
      replace(body, h("div", { class: "notice notice-error", role: "alert" }, (error as Error).message));
    }
  }
  async function retry(job: ExtractionJob, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      await retryExtractionJob(job.id);
      toast("Queued again: it runs in a moment.", { tone: "success" });
      await load();
    } catch (error) {
      button.disabled = false;
      toast((error as Error).message, { tone: "error" });
    }
  }
  await load();
}
