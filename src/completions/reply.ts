import type { Logger } from "../lib/log";
import { pick } from "../lib/json-path";
import { AppError } from "../shared/app-error";
import { contentText } from "../usage/tokens";
import type { StreamTally } from "./sse";
import { redactUpstreamText } from "./upstream";

// A non-streaming reply of the model gateway, read as a completion: whether it is one, its
// text and the usage it reports (what the quota hold settles to and capture remembers).

/** A non-streaming completion's `usage`, when it is an object (its counts are checked where they are read). */
export function usageOf(reply: unknown): StreamTally["usage"] {
  const usage = pick(reply, "usage");
  return typeof usage === "object" && usage !== null ? (usage as StreamTally["usage"]) : null;
}

/** The text of a non-streaming completion's choices (content and tool-call arguments). */
export function replyText(reply: unknown): string {
  const choices = pick(reply, "choices");
  return (Array.isArray(choices) ? choices : [])
    .map((c) => {
      const calls = pick(c, "message", "tool_calls");
      return [
        contentText(pick(c, "message", "content")),
        ...(Array.isArray(calls) ? calls.map((t) => String(pick(t, "function", "arguments") ?? "")) : []),
      ].join("");
    })
    .join("\n");
}

/**
 * A 2xx reply that is not a completion object (an `{"object": "error"}`, plain text) is
 * answered 502 with a generic message: its text goes to the log only, redacted.
 */
export function checkCompletion(parsed: unknown, text: string, log: Logger, gatewayApiKey: string | undefined) {
  const object = pick(parsed, "object");
  const completion =
    Array.isArray(pick(parsed, "choices")) &&
    pick(parsed, "error") === undefined &&
    (object === undefined || object === "chat.completion");
  if (completion) return;
  log.warn("the model gateway answered something that is not a completion", {
    upstream: redactUpstreamText(text, gatewayApiKey),
  });
  throw new AppError(502, "upstream_error", "the model gateway answered something that is not a completion");
}
