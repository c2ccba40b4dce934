/**
 * Proposals: what automatic formation (capture) would change in memories the person
 * wrote, each beside the memory as it is now, with where it came from; accept applies it,
 * reject leaves the memory as it is.
 */
import { ApiError, decideProposal, listProposals } from "../api";
import type { MemoryProposal } from "../api-types";
import { empty, h, loading, replace } from "../dom";
import { plural, time } from "../format";
import { href, type ViewContext } from "../router";
import { setTitle } from "../shell";
import { toast, toastError } from "../toast";

function proposalItem(proposal: MemoryProposal, onDecided: (item: HTMLElement) => void): HTMLElement {
  const problem = h("p", { class: "notice notice-error", role: "alert", hidden: true });
  const buttons = [
    h(
      "button",
      { type: "button", class: "button button-primary" },
      proposal.action === "delete" ? "Accept: forget it" : "Accept",
    ),
    h("button", { type: "button", class: "button" }, "Reject"),
  ];
  const item = h(
    "li",
    { class: "proposal panel", "data-id": proposal.id },
    h(
      "p",
      { class: "proposal-head" },
      h("strong", null, proposal.action === "delete" ? "Forget this memory" : "Change this memory"),
      h(
        "span",
        { class: "muted" },
        " · proposed ",
        time(proposal.createdAt),
        proposal.model ? ` by ${proposal.model}` : "",
      ),
    ),
    h(
      "dl",
      { class: "facts" },
      h("dt", null, "Now"),
      h(
        "dd",
        null,
        proposal.memory
          ? h("a", { href: href("/memories", proposal.memoryId), class: "memory-content" }, proposal.memory.content)
          : h("span", { class: "muted" }, "Forgotten since"),
      ),
      proposal.action === "update"
        ? [h("dt", null, "Proposed"), h("dd", { class: "memory-content proposed" }, proposal.content ?? "")]
        : null,
      h("dt", null, "From"),
      h(
        "dd",
        { class: "muted" },
        proposal.threadId ? `conversation ${proposal.threadId}` : "a conversation",
        proposal.messageIds.length ? `, ${plural(proposal.messageIds.length, "message")}` : "",
      ),
    ),
    problem,
    h("div", { class: "detail-actions" }, buttons),
  );
  const decide = async (decision: "accept" | "reject") => {
    for (const button of buttons) button.disabled = true;
    try {
      await decideProposal(proposal.id, decision);
      toast(decision === "accept" ? "Proposal accepted" : "Proposal rejected");
      onDecided(item);
    } catch (error) {
      // A memory changed since (409) keeps its proposal listed, with why it cannot apply.
      if (error instanceof ApiError && error.status === 409) {
        problem.textContent = error.message;
        problem.hidden = false;
        buttons[1].disabled = false;
      } else {
        toastError(error);
        for (const button of buttons) button.disabled = false;
      }
    }
  };
  buttons[0].addEventListener("click", () => void decide("accept"));
  buttons[1].addEventListener("click", () => void decide("reject"));
  return item;
}

export async function memoryProposalsView({ outlet, signal }: ViewContext): Promise<void> {
  setTitle("Proposals");
  const list = h("ul", { id: "proposal-list", class: "proposal-list", "aria-label": "Proposals" });
  const body = h("div", null, loading("Loading proposals"));
  const more = h("button", { type: "button", class: "button load-more", hidden: true }, "Load more");
  outlet.append(
    h("nav", { class: "breadcrumbs", "aria-label": "Breadcrumbs" }, h("a", { href: href("/memories") }, "Memories")),
    h("div", { class: "page-header" }, h("h1", { tabindex: -1 }, "Proposals")),
    h(
      "p",
      { class: "muted" },
      "Changes the memory model proposed to memories you wrote, from conversations it captured. Nothing changes until you accept.",
    ),
    body,
    more,
  );
  let cursor: string | null = null;
  const showEmpty = () => {
    if (!list.children.length)
      replace(body, empty("No proposals to review.", h("a", { href: href("/memories") }, "Back to memories")));
  };
  const onDecided = (item: HTMLElement) => {
    item.remove();
    showEmpty();
  };
  async function load(): Promise<void> {
    try {
      const page = await listProposals(cursor ?? undefined, signal);
      for (const proposal of page.data) list.append(proposalItem(proposal, onDecided));
      cursor = page.nextCursor;
      more.hidden = !page.hasMore;
      replace(body, list);
      showEmpty();
    } catch (error) {
      if (signal.aborted) return;
      replace(body, h("div", { class: "notice notice-error", role: "alert" }, (error as Error).message));
    }
  }
  more.addEventListener("click", () => void load(), { signal });
  await load();
}
