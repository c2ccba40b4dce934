/**
 * Markdown to DOM, sanitising by construction: the renderer only creates a fixed set of
 * elements and puts every piece of stored text in a text node, so raw HTML in a document
 * (`<img src=x onerror=…>`) shows as text. Links keep only http(s), mailto and relative
 * targets; anything else (`javascript:`, `data:`, `vbscript:`) stays visible as text.
 * Images are shown as links, never loaded: no request leaves the machine.
 *
 * Covers what notes use: headings, paragraphs, emphasis, code (inline and fenced),
 * lists (nested, ordered, tasks), quotes, rules, tables, links, [[wiki links]].
 */
import { h } from "./dom";

const ALLOWED_SCHEMES = new Set(["http", "https", "mailto"]);

/** The link target to use, or null when it must not be a link. */
export function safeHref(raw: string): string | null {
  const url = raw.trim();
  if (!url) return null;
  // Browsers ignore control characters and whitespace inside a scheme ("java\tscript:").
  const compact = url.replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(compact);
  if (!scheme) return compact.startsWith("//") || compact.startsWith("\\") ? null : url;
  return ALLOWED_SCHEMES.has(scheme[1].toLowerCase()) ? url : null;
}

// One alternation per inline construct; the numbered groups are read in renderInline.
const INLINE = new RegExp(
  [
    String.raw`(\`+)([^\`]|[^\`][\s\S]*?[^\`])\1(?!\`)`, // 1, 2: code span
    String.raw`!\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`, // 3, 4: image
    String.raw`\[\[([^[\]\n]+?)\]\]`, // 5: wiki link
    String.raw`\[((?:[^[\]\n]|\[[^[\]\n]*\])+)\]\(\s*<?([^)\s>]*)>?(?:\s+"([^"]*)")?\s*\)`, // 6, 7, 8: link
    String.raw`<((?:https?|mailto):[^>\s]+)>`, // 9: autolink
    String.raw`(\*\*|__)(?=\S)([\s\S]*?\S)\10`, // 10, 11: strong
    String.raw`(\*|_)(?=[^\s*_])([\s\S]*?[^\s\\])\12(?![*_A-Za-z0-9])`, // 12, 13: emphasis
    String.raw`~~(?=\S)([\s\S]*?\S)~~`, // 14: strikethrough
    String.raw`(https?:\/\/[^\s<>()]*[^\s<>().,;:!?'"\]])`, // 15: bare URL
    String.raw`\\([!-/:-@[-\`{-~])`, // 16: backslash escape
    String.raw`(?: {2,}|\\)\n`, // hard line break
  ].join("|"),
  "g",
);

function link(target: string, title: string | undefined, fill: (parent: Node) => void, literal: string): Node {
  const url = safeHref(target);
  if (url === null) return document.createTextNode(literal);
  const anchor = h("a", { href: url, rel: "noopener noreferrer nofollow", title: title || null });
  if (/^(https?|mailto):/i.test(url)) anchor.target = "_blank";
  fill(anchor);
  return anchor;
}

/** Where `[[Title]]` points: an app path, or null when no document has that title. */
let resolveWikiLink: (title: string) => string | null = () => null;

function wikiLink(title: string): Node {
  const target = resolveWikiLink(title);
  return target
    ? h("a", { href: target, class: "md-wikilink" }, title)
    : h("span", { class: "md-wikilink md-wikilink-missing", title: "No document has this title" }, title);
}

const WORD_CHARACTER = /[\p{L}\p{N}]/u;

/**
 * Underscores inside words are text (`snake_case`, `window.__x`): an `_`/`__` run opens
 * only after a non-word character and closes only before one.
 */
function underscoreInsideWord(text: string, start: number, end: number, delimiter: string): boolean {
  if (!delimiter.startsWith("_")) return false;
  return WORD_CHARACTER.test(text[start - 1] ?? "") || WORD_CHARACTER.test(text[end] ?? "");
}

/** `element` with `text` rendered inside it. */
function inline(text: string, element: HTMLElement): HTMLElement {
  renderInline(text, element);
  return element;
}

/** Renders inline Markdown into `parent`. */
export function renderInline(text: string, parent: Node): void {
  const pattern = new RegExp(INLINE.source, "g");
  let last = 0;
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
    const index = m.index;
    const delimiter = m[10] ?? m[12];
    if (delimiter && underscoreInsideWord(text, index, index + m[0].length, delimiter)) {
      // Not emphasis: the delimiter stays text and matching resumes after it.
      pattern.lastIndex = index + delimiter.length;
      continue;
    }
    if (index > last) parent.appendChild(document.createTextNode(text.slice(last, index)));
    last = index + m[0].length;
    let node: Node;
    if (m[1] !== undefined) node = h("code", null, m[2].replace(/^ (.*) $/s, "$1"));
    else if (m[3] !== undefined)
      node = link(
        m[4],
        undefined,
        (a) => a.appendChild(h("span", { class: "md-image" }, `Image: ${m[3] || m[4]}`)),
        m[0],
      );
    else if (m[5] !== undefined) node = wikiLink(m[5].split("|")[0].trim());
    else if (m[6] !== undefined) node = link(m[7], m[8], (a) => renderInline(m[6], a), m[0]);
    else if (m[9] !== undefined)
      node = link(m[9], undefined, (a) => a.appendChild(document.createTextNode(m[9])), m[0]);
    else if (m[10] !== undefined) node = inline(m[11], h("strong"));
    else if (m[12] !== undefined) node = inline(m[13], h("em"));
    else if (m[14] !== undefined) node = inline(m[14], h("del"));
    else if (m[15] !== undefined)
      node = link(m[15], undefined, (a) => a.appendChild(document.createTextNode(m[15])), m[0]);
    else if (m[16] !== undefined) node = document.createTextNode(m[16]);
    else node = h("br");
    parent.appendChild(node);
  }
  if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(?:([ \t]+)(.*)|$)/;
const TABLE_DELIMITER = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

const isBlank = (line: string) => line.trim() === "";
const startsBlock = (line: string) =>
  FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line);

function tableCells(line: string): string[] {
  const trimmed = line
    .trim()
    .replace(/^\|/, "")
    .replace(/(?<!\\)\|$/, "");
  return trimmed.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

function renderTable(lines: string[]): HTMLElement {
  const header = tableCells(lines[0]);
  const aligns = tableCells(lines[1]).map((cell) =>
    cell.startsWith(":") && cell.endsWith(":") ? "center" : cell.endsWith(":") ? "right" : null,
  );
  const cell = (tag: "th" | "td", text: string, i: number) => {
    const element = h(tag, aligns[i] ? { class: `align-${aligns[i]}` } : null);
    renderInline(text, element);
    return element;
  };
  const body = lines.slice(2).map((line) =>
    h(
      "tr",
      null,
      header.map((_, i) => cell("td", tableCells(line)[i] ?? "", i)),
    ),
  );
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      null,
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          header.map((text, i) => cell("th", text, i)),
        ),
      ),
      h("tbody", null, body),
    ),
  );
}

/** Parses one list starting at `start`; returns the element and the next line's index. */
function renderList(lines: string[], start: number): [HTMLElement, number] {
  const first = ITEM.exec(lines[start])!;
  const ordered = /\d/.test(first[2]);
  const list = ordered
    ? h("ol", Number.parseInt(first[2], 10) !== 1 ? { start: Number.parseInt(first[2], 10) } : null)
    : h("ul");
  const items: string[][] = [];
  let loose = false;
  let i = start;
  let indent = 0;
  while (i < lines.length) {
    const line = lines[i];
    const item = ITEM.exec(line);
    if (item && /\d/.test(item[2]) === ordered && item[1].length < indent + 1) {
      indent = item[1].length + item[2].length + Math.min((item[3] ?? " ").length, 4);
      items.push([item[4] ?? ""]);
      i++;
      continue;
    }
    if (isBlank(line)) {
      const next = lines[i + 1];
      if (next === undefined || (!/^\s/.test(next) && !(ITEM.exec(next) && /\d/.test(ITEM.exec(next)![2]) === ordered)))
        break;
      if (!/^\s/.test(next)) loose = true;
      items[items.length - 1].push("");
      i++;
      continue;
    }
    const leading = /^\s*/.exec(line)![0].length;
    if (leading >= 2) items[items.length - 1].push(line.slice(Math.min(leading, indent)));
    else if (!startsBlock(line) && !isBlank(lines[i - 1])) items[items.length - 1].push(line.trim());
    else break;
    i++;
  }
  for (const itemLines of items) {
    const li = h("li");
    const task = /^\[([ xX])\][ \t]+/.exec(itemLines[0]);
    if (task) {
      li.classList.add("task");
      li.appendChild(
        h("input", {
          type: "checkbox",
          disabled: true,
          checked: task[1] !== " ",
          "aria-label": task[1] !== " " ? "done" : "not done",
        }),
      );
      itemLines[0] = itemLines[0].slice(task[0].length);
    }
    renderBlocks(itemLines, li);
    if (!loose)
      for (const p of Array.from(li.children)) if (p.tagName === "P") p.replaceWith(...Array.from(p.childNodes));
    list.appendChild(li);
  }
  return [list, i];
}

/** How many levels a Markdown heading moves down (`#` is an h2 by default: the page has the h1). */
let headingOffset = 1;

function renderBlocks(lines: string[], parent: Node): void {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const close = new RegExp(`^ {0,3}${fence[1][0] === "`" ? "`" : "~"}{${fence[1].length},}\\s*$`);
      const body: string[] = [];
      for (i++; i < lines.length && !close.test(lines[i]); i++) body.push(lines[i]);
      i++;
      parent.appendChild(h("pre", fence[2] ? { "data-language": fence[2] } : null, h("code", null, body.join("\n"))));
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = Math.min(heading[1].length + headingOffset, 6) as 2 | 3 | 4 | 5 | 6;
      const element = h(`h${level}`);
      renderInline(heading[2] ?? "", element);
      parent.appendChild(element);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      parent.appendChild(h("hr"));
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      for (; i < lines.length && QUOTE.test(lines[i]); i++) body.push(lines[i].replace(QUOTE, ""));
      const quote = h("blockquote");
      renderBlocks(body, quote);
      parent.appendChild(quote);
      continue;
    }
    if (ITEM.test(line)) {
      const [list, next] = renderList(lines, i);
      parent.appendChild(list);
      i = next;
      continue;
    }
    if (
      line.includes("|") &&
      lines[i + 1] !== undefined &&
      TABLE_DELIMITER.test(lines[i + 1]) &&
      lines[i + 1].includes("-")
    ) {
      const rows = [line, lines[i + 1]];
      for (i += 2; i < lines.length && !isBlank(lines[i]) && lines[i].includes("|"); i++) rows.push(lines[i]);
      parent.appendChild(renderTable(rows));
      continue;
    }
    if (/^( {4}|\t)/.test(line)) {
      const body: string[] = [];
      for (; i < lines.length && (/^( {4}|\t)/.test(lines[i]) || isBlank(lines[i])); i++)
        body.push(lines[i].replace(/^( {4}|\t)/, ""));
      while (body.length && isBlank(body[body.length - 1])) body.pop();
      parent.appendChild(h("pre", null, h("code", null, body.join("\n"))));
      continue;
    }
    const paragraph: string[] = [line.trim()];
    for (i++; i < lines.length && !isBlank(lines[i]) && !startsBlock(lines[i]); i++)
      paragraph.push(lines[i].replace(/^\s+/, ""));
    const p = h("p");
    renderInline(paragraph.join("\n"), p);
    parent.appendChild(p);
  }
}

/** Renders a Markdown document into a fragment of safe elements; `#` becomes h(1 + offset). */
export function renderMarkdown(
  source: string,
  options: { headingOffset?: number; wikiLink?: (title: string) => string | null } = {},
): DocumentFragment {
  const fragment = document.createDocumentFragment();
  headingOffset = Math.max(1, options.headingOffset ?? 1);
  resolveWikiLink = options.wikiLink ?? (() => null);
  renderBlocks(source.replace(/\r\n?/g, "\n").split("\n"), fragment);
  return fragment;
}
