/**
 * The app's only way to build DOM: elements from a tag, attributes and children.
 * Strings always become text nodes, so stored content is never parsed as HTML; there is
 * no innerHTML anywhere in the app.
 */

export type Child = Node | string | number | null | undefined | false | Child[];
/** A handler of any event type: declared as a method so that `(e: KeyboardEvent) => void` fits (parameter bivariance). */
type Listener = { handle(event: Event): void }["handle"];
export type Attrs = Record<string, string | number | boolean | null | undefined | Listener>;

function apply(element: Element, attrs: Attrs | null | undefined): void {
  if (!attrs) return;
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === "function") {
      // `onClick` → addEventListener("click"): never an inline handler attribute (the CSP forbids them).
      if (!name.startsWith("on")) throw new Error(`attribute ${name}: a function is only allowed for on… listeners`);
      element.addEventListener(name.slice(2).toLowerCase(), value);
      continue;
    }
    if (name.startsWith("on")) throw new Error(`attribute ${name}: handlers must be functions`);
    element.setAttribute(name === "className" ? "class" : name, value === true ? "" : String(value));
  }
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

/** An HTML element. @example h("button", { type: "button", onClick: save }, "Save") */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  apply(element, attrs);
  append(element, children);
  return element;
}

const SVG_NS = "http://www.w3.org/2000/svg";
/** An SVG element (charts and the graph view). */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG_NS, tag);
  apply(element, attrs);
  append(element, children);
  return element;
}

/** Replaces an element's children. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A fragment of children, for views that return several top-level nodes. */
export function fragment(...children: Child[]): DocumentFragment {
  const f = document.createDocumentFragment();
  append(f, children);
  return f;
}

let idCounter = 0;
/** A document-unique id for label/aria wiring. */
export const uid = (prefix = "id") => `${prefix}-${++idCounter}`;

/** A labelled form field: label, control, optional hint and an error slot wired with aria-describedby. */
export function field(
  label: string,
  control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement,
  hint?: string,
) {
  const id = control.id || uid("field");
  control.id = id;
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const error = h("p", { class: "field-error", id: errorId, hidden: true });
  control.setAttribute("aria-describedby", [hint ? hintId : "", errorId].filter(Boolean).join(" "));
  const wrapper = h(
    "div",
    { class: "field" },
    h("label", { for: id }, label),
    control,
    hint ? h("p", { class: "hint", id: hintId }, hint) : null,
    error,
  );
  return {
    element: wrapper,
    /** Shows (or with null clears) a message under the field and marks the control invalid. */
    setError(message: string | null) {
      error.textContent = message ?? "";
      error.hidden = !message;
      if (message) control.setAttribute("aria-invalid", "true");
      else control.removeAttribute("aria-invalid");
    },
  };
}

/** A loading placeholder announced politely. */
export const loading = (what = "Loading") => h("p", { class: "muted loading", role: "status" }, `${what}…`);

/** An empty state. */
export const empty = (title: string, ...details: Child[]) =>
  h("div", { class: "empty" }, h("p", { class: "empty-title" }, title), ...details);
