import type { Logger } from "../lib/log";
import type { QuotaHold, UsageService } from "../usage/service";
import { countPromptTokens, countTextTokens } from "../usage/tokens";
import type { StreamTally } from "./sse";

/** Tokens of a completion: the upstream's `usage` when it gave one, else counted (see usage/tokens.ts). */
async function tokensOf(
  usage: { prompt_tokens?: unknown; completion_tokens?: unknown } | null | undefined,
  messages: unknown[],
  completionText: string,
) {
  const prompt = typeof usage?.prompt_tokens === "number" ? usage.prompt_tokens : await countPromptTokens(messages);
  const completion =
    typeof usage?.completion_tokens === "number" ? usage.completion_tokens : await countTextTokens(completionText);
  return { promptTokens: Math.max(0, Math.round(prompt)), completionTokens: Math.max(0, Math.round(completion)) };
}

/**
 * A request's quota hold and its one ending: settled to the tokens used, or released unused
 * (whichever comes first; the other is then a no-op). Neither throws: a failure is logged.
 */
export function holdSettlement(hold: QuotaHold, usage: UsageService, log: Logger) {
  let closed = false;
  return {
    async settle(messages: unknown[], usageReported: StreamTally["usage"], text: string) {
      if (closed) return;
      closed = true;
      try {
        await usage.settle(hold, { ...(await tokensOf(usageReported, messages, text)), requests: 1 });
      } catch (error) {
        log.error("usage not recorded", { userId: hold.userId, error: error as Error });
      }
    },
    async release() {
      if (closed) return;
      closed = true;
      await usage.release(hold).catch((error) =>
        log.warn("quota hold not released; it lapses when it expires", {
          userId: hold.userId,
          reason: (error as Error).message,
        }),
      );
    },
  };
}
