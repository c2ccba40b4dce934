/**
 * A small history router under /app: `/app/memories`, `/app/workspaces/:id/documents`, …
 * The server answers every GET /app/* with index.html, so deep links and reloads work.
 * Each view gets an AbortSignal that fires when the user leaves it, cancelling its requests.
 */
export const BASE = "/app";

export interface ViewContext {
  params: Record<string, string>;
  query: URLSearchParams;
  outlet: HTMLElement;
  signal: AbortSignal;
}
export type View = (context: ViewContext) => void | Promise<void>;

interface Route {
  segments: string[];
  view: View;
}

const routes: Route[] = [];
let outlet: HTMLElement | null = null;
let current: AbortController | null = null;
let notFound: View = () => {};
/** The path and query last rendered. */
let rendered = "";
const afterRender = new Set<(path: string) => void>();

/** Registers a view for a pattern such as `/memories/:id` (relative to /app). */
export function route(pattern: string, view: View): void {
  routes.push({ segments: pattern.split("/").filter(Boolean), view });
}

function match(path: string): { view: View; params: Record<string, string> } | null {
  const parts = path
    .split("/")
    .filter(Boolean)
    .map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part;
      }
    });
  for (const candidate of routes) {
    if (candidate.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const ok = candidate.segments.every((segment, i) => {
      if (segment.startsWith(":")) {
        params[segment.slice(1)] = parts[i];
        return true;
      }
      return segment === parts[i];
    });
    if (ok) return { view: candidate.view, params };
  }
  return null;
}

/** The path inside the app, e.g. `/memories`. */
export function appPath(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return path === "" || path === "/" ? "/" : path.replace(/\/+$/, "");
}

/** A link target inside the app. @example href("/memories", id) */
export const href = (...parts: string[]) =>
  `${BASE}/${parts.map((part) => part.split("/").map(encodeURIComponent).join("/")).join("/")}`.replace(/\/+/g, "/");

/** Renders the current location into the outlet; `focusMain` moves focus to the new page's heading. */
export async function render(focusMain = false): Promise<void> {
  if (!outlet) return;
  current?.abort();
  const controller = new AbortController();
  current = controller;
  const found = match(appPath());
  rendered = location.pathname + location.search;
  outlet.replaceChildren();
  const context = {
    params: found?.params ?? {},
    query: new URLSearchParams(location.search),
    outlet,
    signal: controller.signal,
  };
  const pending = (found?.view ?? notFound)(context);
  // The heading exists once the view's synchronous part ran: screen readers hear the new page.
  if (focusMain) outlet.querySelector<HTMLElement>("h1")?.focus({ preventScroll: false });
  for (const listener of afterRender) listener(appPath());
  await pending;
}

/** Goes to `path` (inside /app, or a full /app/… path). */
export function navigate(path: string, options: { replace?: boolean; focus?: boolean } = {}): Promise<void> {
  const full = path.startsWith(BASE) ? path : `${BASE}${path.startsWith("/") ? "" : "/"}${path}`;
  if (options.replace) history.replaceState(null, "", full);
  else if (full !== location.pathname + location.search) history.pushState(null, "", full);
  return render(options.focus ?? true);
}

/** Calls `listener` after every render, with the app path (the shell marks the current nav link). */
export const onRender = (listener: (path: string) => void) => afterRender.add(listener);

/** The app URL an ordinary click on a link goes to (HTML or SVG <a>), or null to let the browser follow it. */
function appLinkTarget(event: MouseEvent): URL | null {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
    return null;
  const anchor = (event.target as Element | null)?.closest?.("a");
  const target = anchor?.getAttribute("href");
  if (
    !anchor ||
    target === null ||
    target === undefined ||
    anchor.getAttribute("target") ||
    anchor.hasAttribute("download")
  )
    return null;
  const url = new URL(target, location.href);
  return url.origin === location.origin &&
    (url.pathname === BASE || url.pathname.startsWith(`${BASE}/`)) &&
    !target.startsWith("#")
    ? url
    : null;
}

/** Starts routing into `element`: app links and back/forward render without a page load. */
let listening = false;
export function startRouter(element: HTMLElement, fallback: View): void {
  outlet = element;
  notFound = fallback;
  if (listening) return;
  listening = true;
  document.addEventListener("click", (event) => {
    const url = appLinkTarget(event);
    if (!url) return;
    event.preventDefault();
    void navigate(url.pathname + url.search).then(() => {
      if (url.hash) document.getElementById(url.hash.slice(1))?.scrollIntoView();
    });
  });
  // A fragment link (#keys) also fires popstate: only a new path or query renders again.
  window.addEventListener("popstate", () => {
    if (location.pathname + location.search !== rendered) void render(true);
  });
}

/** Stops routing (sign-out): the current view's requests are cancelled. */
export function stopRouter(): void {
  current?.abort();
  current = null;
  outlet = null;
}
