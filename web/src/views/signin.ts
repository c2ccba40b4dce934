/**
 * Signing in: a one-time link (`mnemo open --user ID` prints `/app/#signin=<token>`) or a
 * pasted API key. The page sits outside the shell: nothing else is shown signed out.
 */
import { ApiError, signInWithKey } from "../api";
import { confirmDialog } from "../dialog";
import { field, h } from "../dom";
import { setTitle } from "../shell";
import { toastRegion } from "../toast";

export interface SignInOptions {
  message?: string;
  tone?: "error" | "info";
  /** Shown instead of the form while a link is exchanged. */
  pending?: string;
  onStart?: () => void;
  onSignedIn: (userId: string) => Promise<void>;
}

/** Words for a failed sign-in link: expired, already used, unknown. */
export function describeLinkFailure(error: unknown): string {
  if (!(error instanceof ApiError)) return "Signing in failed. Try again, or paste an API key.";
  if (error.status === 0) return error.message;
  const text = `${error.code} ${error.message}`.toLowerCase();
  if (text.includes("expired")) return "This sign-in link has expired. Run `mnemo open` again for a new one.";
  if (/already|used|consumed|redeemed/.test(text))
    return "This sign-in link was already used: each link works once. Run `mnemo open` again for a new one.";
  return `This sign-in link was not accepted: ${error.message}`;
}

/**
 * Asks before a sign-in link replaces the session this browser holds: any site can send a
 * browser to `/app/#signin=<its own link>`, which would otherwise sign the visitor into
 * that account (login CSRF) and end their own session. True when the user says so.
 */
export function confirmAccountSwitch(current: string, next: string): Promise<boolean> {
  return confirmDialog(
    "Switch account?",
    `You are signed in as ${current}. Sign in as ${next} instead?`,
    `Sign in as ${next}`,
  );
}

function describeKeyFailure(error: unknown): string {
  if (!(error instanceof ApiError)) return "Signing in failed.";
  if (error.status === 401) return `That key was not accepted: ${error.message}`;
  return error.message;
}

export function renderSignIn(options: SignInOptions): void {
  setTitle("Sign in");
  const notice = h(
    "div",
    {
      class: `notice ${options.tone === "info" ? "notice-info" : "notice-error"}`,
      role: "alert",
      hidden: !options.message,
    },
    options.message ?? "",
  );
  const input = h("input", {
    type: "password",
    name: "apiKey",
    autocomplete: "off",
    spellcheck: "false",
    required: true,
    placeholder: "svc_sk_live_…",
  });
  const keyField = field(
    "API key",
    input,
    "Exchanged for a session of the same user and scopes; the key itself is not kept.",
  );
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Sign in");
  const form = h(
    "form",
    { class: "signin-form", "aria-labelledby": "signin-key-heading" },
    h("h2", { id: "signin-key-heading" }, "Paste an API key"),
    keyField.element,
    submit,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const key = input.value.trim();
    keyField.setError(key ? null : "Paste a key first.");
    if (!key) return input.focus();
    submit.disabled = true;
    submit.textContent = "Signing in…";
    options.onStart?.();
    try {
      const userId = await signInWithKey(key);
      input.value = "";
      await options.onSignedIn(userId);
    } catch (error) {
      submit.disabled = false;
      submit.textContent = "Sign in";
      notice.textContent = describeKeyFailure(error);
      notice.className = "notice notice-error";
      notice.hidden = false;
      input.focus();
    }
  });
  const main = h(
    "main",
    { id: "main", class: "signin", tabindex: -1 },
    h(
      "div",
      { class: "signin-card" },
      h("div", { class: "signin-brand", "aria-hidden": "true" }, h("span", { class: "brand-mark" }, "m"), "Mnemo"),
      h("h1", { tabindex: -1 }, "Sign in"),
      h("p", { class: "muted" }, "Your memory server runs on this machine; this page talks only to it."),
      notice,
      options.pending
        ? h("p", { class: "muted", role: "status" }, options.pending)
        : [
            h(
              "section",
              { class: "signin-link", "aria-labelledby": "signin-link-heading" },
              h("h2", { id: "signin-link-heading" }, "Use a sign-in link"),
              h(
                "p",
                null,
                "Run ",
                h("code", null, "mnemo open --user <id>"),
                " in a terminal. It prints a link that signs you in once and expires in minutes.",
              ),
            ),
            form,
          ],
    ),
  );
  document.body.replaceChildren(main, toastRegion());
  if (!options.pending) input.focus();
}
