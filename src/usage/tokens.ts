/**
 * Token counting when the upstream reports no `usage` (some OpenAI-compatible servers
 * omit it, and an aborted stream never gets its final usage chunk). Counts with
 * gpt-tokenizer's default encoding (o200k_base, GPT-4o's): exact for OpenAI's current
 * models, an estimate for others (Llama, Mistral, … use their own vocabularies).
 * Per message it adds OpenAI's documented framing: 3 tokens per message plus 3 for the
 * reply's priming. The tokenizer (a few MB of ranks) is loaded on first need only.
 */
type Tokenizer = { countTokens(text: string): number };
let tokenizer: Promise<Tokenizer> | null = null;
const load = () => (tokenizer ??= import("gpt-tokenizer").then((m) => ({ countTokens: (text: string) => m.countTokens(text) })));

/** The text of a message's `content`: a string, or the text parts of an array. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => (part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : "")).join("\n");
  }
  return "";
}

/** Text a message carries beyond its content: tool calls' names and arguments. */
function toolCallText(message: Record<string, unknown>): string {
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  return calls.map((c) => {
    const fn = (c as { function?: { name?: unknown; arguments?: unknown } }).function;
    return `${typeof fn?.name === "string" ? fn.name : ""} ${typeof fn?.arguments === "string" ? fn.arguments : ""}`;
  }).join("\n");
}

export async function countPromptTokens(messages: unknown[]): Promise<number> {
  const { countTokens } = await load();
  let total = 3;
  for (const message of messages) {
    if (!message || typeof message !== "object") continue;
    const m = message as Record<string, unknown>;
    total += 3 + countTokens(String(m.role ?? "")) + countTokens(contentText(m.content));
    const tools = toolCallText(m);
    if (tools) total += countTokens(tools);
    if (typeof m.name === "string") total += 1 + countTokens(m.name);
  }
  return total;
}

export async function countTextTokens(text: string): Promise<number> {
  if (!text) return 0;
  const { countTokens } = await load();
  return countTokens(text);
}
