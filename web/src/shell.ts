/**
 * The signed-in page: a skip link, the top bar (brand, main navigation, who is signed in,
 * theme, sign out), the main landmark the router renders into, and the toast region.
 */
import type { SignedInUser } from "./session";
import { h } from "./dom";
import { href, onRender } from "./router";
import { themeToggle } from "./theme";
import { toastRegion } from "./toast";

const NAV: Array<[string, string]> = [
  ["/memories", "Memories"],
  ["/workspaces", "Workspaces"],
  ["/server", "Your server"],
];

export function mountShell(user: SignedInUser, onSignOut: () => void): HTMLElement {
  const main = h("main", { id: "main", class: "main", tabindex: -1 });
  const links = NAV.map(([path, label]) => h("a", { href: href(path), class: "nav-link", "data-path": path }, label));
  const skip = h(
    "a",
    {
      class: "skip-link",
      href: "#main",
      onClick: (event: MouseEvent) => {
        event.preventDefault();
        (main.querySelector<HTMLElement>("h1") ?? main).focus();
      },
    },
    "Skip to content",
  );
  const signOut = h("button", { type: "button", class: "button button-quiet", onClick: onSignOut }, "Sign out");
  const header = h(
    "header",
    { class: "topbar" },
    h(
      "div",
      { class: "topbar-inner" },
      h(
        "a",
        { class: "brand", href: href("/memories"), "aria-label": "Mnemo, memories" },
        h("span", { class: "brand-mark", "aria-hidden": "true" }, "m"),
        "Mnemo",
      ),
      h("nav", { class: "nav", "aria-label": "Main" }, links),
      h(
        "div",
        { class: "topbar-end" },
        h(
          "span",
          { class: "who", title: "Signed in as" },
          h("span", { class: "visually-hidden" }, "Signed in as "),
          user.userId,
        ),
        themeToggle(),
        signOut,
      ),
    ),
  );
  onRender((path) => {
    for (const link of links) {
      const section = link.dataset.path!;
      if (path === section || path.startsWith(`${section}/`)) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
  });
  document.body.replaceChildren(skip, header, main, toastRegion());
  return main;
}

/** Sets the page title that browsers and screen readers show. */
export function setTitle(...parts: string[]): void {
  document.title = [...parts, "Mnemo"].filter(Boolean).join(" · ");
}
