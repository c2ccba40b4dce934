/** API keys: list, create (the secret is shown once, with a copy button), revoke. */
import { createKey, listKeys, revokeKey } from "../api";
import type { ApiKey } from "../api-types";
import { confirmDialog } from "../dialog";
import { field, h, loading, replace } from "../dom";
import { ago, time } from "../format";
import { toast, toastError } from "../toast";

const SCOPES = ["memory:read", "memory:write", "chat", "files:write", "usage:read"];

const label = (key: ApiKey) => key.name ?? key.id;

function keysList(keys: ApiKey[], onRevoke: (key: ApiKey) => void): HTMLElement {
  if (!keys.length) return h("p", { class: "muted" }, "No API keys yet.");
  return h(
    "ul",
    { class: "entity-list", "aria-label": "API keys" },
    keys.map((key) =>
      h(
        "li",
        { class: "entity-row" },
        h(
          "div",
          { class: "entity-main entity-stack" },
          h("span", { class: "entity-title" }, label(key), " ", h("span", { class: "mono muted" }, key.id)),
          h(
            "span",
            { class: "chip-row" },
            key.scopes.map((scope) => h("span", { class: "chip" }, scope)),
          ),
          h(
            "span",
            { class: "entity-meta" },
            "created ",
            time(key.createdAt, { dateOnly: true }),
            ` · last used ${ago(key.lastUsedAt)}`,
          ),
        ),
        h(
          "button",
          {
            type: "button",
            class: "button button-small button-danger",
            "aria-label": `Revoke ${label(key)}`,
            onClick: () => onRevoke(key),
          },
          "Revoke",
        ),
      ),
    ),
  );
}

/** The new key's secret, shown once, with a copy button. */
function revealed(secret: string, onDone: () => void): HTMLElement {
  const value = h("input", {
    type: "text",
    readonly: true,
    class: "mono secret",
    value: secret,
    "aria-label": "Your new API key",
  });
  const copy = h(
    "button",
    {
      type: "button",
      class: "button button-primary",
      onClick: async () => {
        try {
          await navigator.clipboard.writeText(secret);
          toast("Copied the key.", { tone: "success" });
        } catch {
          value.select();
          toast("Select and copy the key with your keyboard: the browser did not allow copying.");
        }
      },
    },
    "Copy",
  );
  return h(
    "div",
    { class: "notice notice-success key-reveal", role: "status" },
    h("p", null, h("strong", null, "Your new key. "), "It is shown only now: store it somewhere safe."),
    h("div", { class: "copy-row" }, value, copy),
    h("button", { type: "button", class: "button button-small", onClick: onDone }, "Done"),
  );
}

export async function keysSection(section: HTMLElement, signal: AbortSignal): Promise<void> {
  const body = h("div", null, loading("Loading keys"));
  const name = h("input", {
    type: "text",
    name: "name",
    maxlength: 100,
    autocomplete: "off",
    placeholder: "e.g. laptop agent",
  });
  const nameField = field("Name", name);
  const scopeBoxes = SCOPES.map((scope) =>
    h("input", { type: "checkbox", name: "scope", value: scope, checked: true }),
  );
  const form = h(
    "form",
    { class: "key-form" },
    nameField.element,
    h(
      "fieldset",
      { class: "scopes" },
      h("legend", null, "Scopes"),
      scopeBoxes.map((box, i) => h("label", { class: "check" }, box, SCOPES[i])),
    ),
    h("button", { type: "submit", class: "button button-primary" }, "Create key"),
  );
  const reveal = h("div");
  section.append(reveal, body, form);

  let keys: ApiKey[] = [];
  const draw = () =>
    replace(
      body,
      keysList(keys, async (key) => {
        if (
          !(await confirmDialog(
            "Revoke key",
            `Revoke “${label(key)}”? Programs using it stop working at once.`,
            "Revoke",
            true,
          ))
        )
          return;
        try {
          await revokeKey(key.id);
          keys = keys.filter((k) => k.id !== key.id);
          draw();
          toast(`Revoked ${label(key)}.`);
        } catch (error) {
          toastError(error);
        }
      }),
    );

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    nameField.setError(name.value.trim() ? null : "Name the key after what will use it.");
    if (!name.value.trim()) return name.focus();
    try {
      const created = await createKey({
        name: name.value.trim(),
        scopes: scopeBoxes.filter((b) => b.checked).map((b) => b.value),
      });
      name.value = "";
      keys = [
        ...keys,
        {
          id: created.id,
          name: created.name,
          prefix: created.prefix,
          scopes: created.scopes ?? [],
          createdAt: created.createdAt,
          lastUsedAt: null,
        },
      ];
      draw();
      replace(
        reveal,
        revealed(created.key, () => replace(reveal)),
      );
      reveal.querySelector<HTMLInputElement>("input")?.focus();
      reveal.querySelector<HTMLInputElement>("input")?.select();
    } catch (error) {
      toastError(error);
    }
  });

  try {
    keys = (await listKeys(signal)).data;
    draw();
  } catch (error) {
    if (signal.aborted) return;
    replace(body, h("div", { class: "notice notice-error", role: "alert" }, (error as Error).message));
  }
}
