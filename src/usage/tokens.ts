/**
 * Token counting when the upstream reports no `usage` (some OpenAI-compatible servers
 * omit it, and an aborted stream never gets its final usage chunk). Counts with
 * gpt-tokenizer's default encoding (o200k_base, GPT-4o's): exact for OpenAI's current
 * models, an estimate for others (Llama, Mistral, … use their own vocabularies).
 * Per message it adds OpenAI's documented framing: 3 tokens per message plus 3 for the
 * reply's priming. The tokenizer (its ranks take much memory:
 * docs/performance.md#why-the-code-is-tuned-as-it-is) is loaded on first need only; `promptTokenBound` answers without it.
 */
type Tokenizer = { countTokens(text: string): number };
let tokenizer: Promise<Tokenizer> | null = null;
// Special-token text (`<|endoftext|>`) in a message is counted as the plain text it is; by
// default the tokenizer throws on it, and the request would go unmetered.
const AS_TEXT = { disallowedSpecial: new Set<string>() };
const load = () =>
  (tokenizer ??= import("gpt-tokenizer").then((m) => ({
    countTokens: (text: string) => m.countTokens(text, AS_TEXT),
  })));

/** The text of a message's `content`: a string, or the text parts of an array. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string"
          ? (part as { text: string }).text
          : "",
      )
      .join("\n");
  }
  return "";
}

/** Text a message carries beyond its content: tool calls' names and arguments. */
function toolCallText(message: Record<string, unknown>): string {
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  return calls
    .map((c) => {
      const fn = (c as { function?: { name?: unknown; arguments?: unknown } }).function;
      return `${typeof fn?.name === "string" ? fn.name : ""} ${typeof fn?.arguments === "string" ? fn.arguments : ""}`;
    })
    .join("\n");
}

/** The prompt's tokens by `count`: OpenAI's framing around each message's role, content, tool calls and name. */
function promptTokens(messages: unknown[], count: (text: string) => number): number {
  let total = 3;
  for (const message of messages) {
    if (!message || typeof message !== "object") continue;
    const m = message as Record<string, unknown>;
    total += 3 + count(String(m.role ?? "")) + count(contentText(m.content));
    const tools = toolCallText(m);
    if (tools) total += count(tools);
    if (typeof m.name === "string") total += 1 + count(m.name);
  }
  return total;
}

export async function countPromptTokens(messages: unknown[]): Promise<number> {
  const { countTokens } = await load();
  return promptTokens(messages, countTokens);
}

/**
 * At least `countPromptTokens`, without the tokenizer: a byte-level BPE token covers one
 * byte at least, so a text's UTF-8 bytes bound its tokens (about 4× for English).
 */
export function promptTokenBound(messages: unknown[]): number {
  return promptTokens(messages, textTokenBound);
}

/** At least `countTextTokens`: the text's UTF-8 bytes. */
export const textTokenBound = (text: string) => Buffer.byteLength(text, "utf8");

export async function countTextTokens(text: string): Promise<number> {
  if (!text) return 0;
  const { countTokens } = await load();
  return countTokens(text);
}
