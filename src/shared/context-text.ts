/** The context text (context build, the documents query; docs/api.md#core-and-memories): one block a prompt can take as it is. */
export const CONTEXT_HEADING = "## Relevant context";

/** Renders items as the context text: a heading line, then one bullet per item. */
export function renderContextText(items: Array<{ content: string }>): string {
  if (items.length === 0) return "";
  return [CONTEXT_HEADING, ...items.map((item) => `- ${item.content.replace(/\s+/g, " ").trim()}`)].join("\n");
}
