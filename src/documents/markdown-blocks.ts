import { LIMITS } from "./model";
import type { IndexedBlock } from "./repository";

/**
 * An encrypted blob string, `iv_hex:auth_tag_hex:ciphertext_hex` (docs/encryption.md#cryptography "Encrypted
 * envelope"), or the server's bound form `v2:iv_hex:auth_tag_hex:ciphertext_hex` (crypto/binding.ts).
 */
export const ENCRYPTED_BLOB = /^(?:v2:)?[0-9a-f]+:[0-9a-f]+:[0-9a-f]*$/i; // empty plaintext seals to an empty ciphertext

/**
 * Whether a stored string is ciphertext: an `iv:tag:ct` blob, or an encrypted envelope
 * (`{format, ciphertext}`) serialized as JSON. Ciphertext is never indexed: its "words"
 * are hex noise, and indexing it would say nothing true about the document.
 */
export function isEncryptedText(text: string): boolean {
  const trimmed = text.trim();
  if (ENCRYPTED_BLOB.test(trimmed)) return true;
  if (!trimmed.startsWith("{") || !trimmed.includes("ciphertext")) return false;
  try {
    const value = JSON.parse(trimmed) as Record<string, unknown>;
    return typeof value === "object" && value !== null && typeof value.ciphertext === "string";
  } catch {
    return false;
  }
}

const HEADING = /^ {0,3}#{1,6}(\s|$)/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * Splits plaintext markdown into blocks for the search index, for documents sent
 * without `indexable_blocks`: each ATX heading is a block (type `heading`), each run of
 * lines up to a blank line or a heading is one (`paragraph`), and a fenced code block
 * stays whole (`code`). Ids are `md-1`, `md-2`… in document order, so an edit that
 * keeps the structure keeps the ids. Past the block limit, the rest joins the last block.
 * Encrypted markdown gives no blocks.
 *
 * @example markdownBlocks("# Owls\n\nThey hunt at night.")
 * // [{ id: "md-1", type: "heading", content: "# Owls" }, { id: "md-2", type: "paragraph", content: "They hunt at night." }]
 */
export function markdownBlocks(markdown: string): IndexedBlock[] {
  if (!markdown.trim() || isEncryptedText(markdown)) return [];
  const blocks: Array<{ type: string; lines: string[] }> = [];
  let current: { type: string; lines: string[] } | null = null;
  let fence: string | null = null;
  const close = () => {
    if (current) blocks.push(current);
    current = null;
  };
  for (const line of markdown.split(/\r?\n/)) {
    if (fence !== null) {
      current!.lines.push(line);
      if (line.trimStart().startsWith(fence)) {
        fence = null;
        close();
      }
      continue;
    }
    const opening = FENCE.exec(line);
    if (opening) {
      close();
      current = { type: "code", lines: [line] };
      fence = opening[1].slice(0, 3);
    } else if (HEADING.test(line)) {
      close();
      blocks.push({ type: "heading", lines: [line] });
    } else if (!line.trim()) {
      close();
    } else {
      current ??= { type: "paragraph", lines: [] };
      current.lines.push(line);
    }
  }
  close();
  const kept = blocks
    .map((block) => ({ type: block.type, content: block.lines.join("\n").trim() }))
    .filter((block) => block.content.length > 0);
  if (kept.length > LIMITS.blocks) {
    const rest = kept.splice(LIMITS.blocks - 1);
    kept.push({ type: "paragraph", content: rest.map((block) => block.content).join("\n\n") });
  }
  return kept.map((block, i) => ({ id: `md-${i + 1}`, type: block.type, content: block.content }));
}
