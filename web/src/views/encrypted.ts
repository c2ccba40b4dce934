/** Recognising values the server holds encrypted, and saying how to read them. */
import type { Json } from "../api-types";
import { h } from "../dom";
import { href } from "../router";

const CIPHERTEXT = /^(?:v2:)?[0-9a-f]{24}:[0-9a-f]{32}:(?:[0-9a-f]{2})*$/i;
const ENVELOPE_FORMAT = "svc.om.encrypted";

/** An `iv:tag:ct` string or a `{format: "svc.om.encrypted", ciphertext}` envelope. */
export function isEncrypted(value: Json | undefined): boolean {
  if (typeof value === "string") return CIPHERTEXT.test(value);
  return typeof value === "object" && value !== null && !Array.isArray(value) && value.format === ENVELOPE_FORMAT;
}

export function lockedNotice(what: string): HTMLElement {
  return h(
    "div",
    { class: "notice notice-info" },
    h(
      "p",
      null,
      `This ${what} is encrypted. `,
      h("a", { href: `${href("/server")}#encryption` }, "Enter your client key"),
      " (or use the key escrowed on this server) to read it here. The key stays in this tab's memory.",
    ),
  );
}

export function decryptErrorsNotice(count: number): HTMLElement | null {
  if (!count) return null;
  return h(
    "div",
    { class: "notice notice-error", role: "alert" },
    `${count} encrypted ${count === 1 ? "value" : "values"} did not open with this key: check it under Your server → Encryption.`,
  );
}
