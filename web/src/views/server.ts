/** Your server: who you are, API keys, usage and credits, the index's status, and the client key for encrypted notes. */
import { decryption, me, setDecryption } from "../api";
import { field, h } from "../dom";
import type { ViewContext } from "../router";
import { currentUser } from "../session";
import { setTitle } from "../shell";
import { toast } from "../toast";
import { jobsSection } from "./server-jobs";
import { keysSection } from "./server-keys";
import { statusSection, usageSection } from "./server-usage";

const KEY_SHAPE = /^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$/;

function section(id: string, title: string, description?: string): HTMLElement {
  return h(
    "section",
    { class: "panel settings-section", id, "aria-labelledby": `${id}-heading` },
    h("div", { class: "section-header" }, h("h2", { id: `${id}-heading` }, title)),
    description ? h("p", { class: "muted section-description" }, description) : null,
  );
}

function encryptionSection(target: HTMLElement, escrowPresent: boolean): void {
  const input = h("input", {
    type: "password",
    name: "clientKey",
    autocomplete: "off",
    spellcheck: "false",
    class: "mono",
    placeholder: "64 hex characters or base64",
  });
  const keyField = field(
    "Client key",
    input,
    "Kept in this tab's memory only: never stored by the browser, gone when you close or reload the tab.",
  );
  const state = h("p", { class: "status-line", role: "status" });
  const escrow = h("input", { type: "checkbox", name: "escrow", checked: decryption().escrow });
  const forget = h("button", { type: "button", class: "button" }, "Forget key");
  const describe = () => {
    const { hasClientKey, escrow: useEscrow } = decryption();
    state.textContent = hasClientKey
      ? "Encrypted notes, documents and messages are shown decrypted with your key."
      : useEscrow
        ? "Encrypted content is shown decrypted with the key escrowed on this server."
        : "Encrypted content is shown locked.";
    forget.hidden = !hasClientKey;
  };
  const form = h(
    "form",
    { class: "inline-form" },
    keyField.element,
    h("button", { type: "submit", class: "button button-primary" }, "Use key"),
    forget,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = input.value.trim();
    keyField.setError(
      KEY_SHAPE.test(value) ? null : "A client key is 32 bytes: 64 hex characters, or 43–44 base64 characters.",
    );
    if (!KEY_SHAPE.test(value)) return input.focus();
    setDecryption({ clientKey: value });
    input.value = "";
    describe();
    toast("Client key held for this tab.", { tone: "success" });
  });
  forget.addEventListener("click", () => {
    setDecryption({ clientKey: null });
    describe();
    input.focus();
  });
  escrow.addEventListener("change", () => {
    setDecryption({ escrow: escrow.checked });
    describe();
  });
  target.append(
    form,
    escrowPresent
      ? h("label", { class: "check" }, escrow, "Use the client key escrowed on this server")
      : h("p", { class: "muted" }, "No client key is escrowed on this server."),
    state,
  );
  describe();
}

export async function serverView({ outlet, signal }: ViewContext): Promise<void> {
  setTitle("Your server");
  const user = currentUser();
  const account = section("account", "Account");
  account.append(
    h("dl", { class: "facts" }, h("dt", null, "Signed in as"), h("dd", { class: "mono" }, user?.userId ?? "—")),
  );
  const keys = section(
    "keys",
    "API keys",
    "Keys let programs and agents use this server as you, with the scopes you choose.",
  );
  const usage = section("usage", "Usage this month");
  const status = section("index", "Index status", "The search index is built from the store in the background.");
  const jobs = section(
    "jobs",
    "Memory extraction",
    "Conversations captured with X-Svc-Remember become memories in the background. Jobs that failed show here, with why; retry one once the cause is fixed.",
  );
  const encryption = section(
    "encryption",
    "Encryption",
    "Notes, documents and messages written with a client key are stored encrypted. Give the key here to read them.",
  );
  outlet.append(
    h("div", { class: "page-header" }, h("h1", { tabindex: -1 }, "Your server")),
    h(
      "div",
      { class: "settings" },
      h(
        "nav",
        { class: "settings-nav", "aria-label": "Sections" },
        h(
          "ul",
          null,
          [
            ["account", "Account"],
            ["keys", "API keys"],
            ["usage", "Usage"],
            ["index", "Index status"],
            ["jobs", "Memory extraction"],
            ["encryption", "Encryption"],
          ].map(([id, label]) => h("li", null, h("a", { href: `#${id}` }, label))),
        ),
      ),
      h("div", { class: "settings-body" }, account, keys, usage, status, jobs, encryption),
    ),
  );
  const escrowPresent = await me().then(
    (who) => who.clientKeyEscrow.present,
    () => false,
  );
  encryptionSection(encryption, escrowPresent);
  if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();
  await Promise.all([
    keysSection(keys, signal),
    usageSection(usage, signal),
    statusSection(status, signal),
    jobsSection(jobs, signal),
  ]);
}
