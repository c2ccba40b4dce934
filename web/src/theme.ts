/**
 * Light and dark: the system's choice by default, or the user's, kept in localStorage
 * (a display preference, not a secret). The CSS reads `data-theme` on <html>.
 */
import { h } from "./dom";

type Theme = "system" | "light" | "dark";
const KEY = "mnemo.theme";
const ORDER: Theme[] = ["system", "light", "dark"];
const LABEL: Record<Theme, string> = { system: "Theme: system", light: "Theme: light", dark: "Theme: dark" };
const ICON: Record<Theme, string> = { system: "◐", light: "☀", dark: "☾" };

function stored(): Theme {
  try {
    const value = localStorage.getItem(KEY);
    return value === "light" || value === "dark" ? value : "system";
  } catch {
    return "system";
  }
}

function apply(theme: Theme): void {
  if (theme === "system") document.documentElement.removeAttribute("data-theme");
  else document.documentElement.setAttribute("data-theme", theme);
}

export function initTheme(): void {
  apply(stored());
}

/** A button that cycles system → light → dark. */
export function themeToggle(): HTMLButtonElement {
  let theme = stored();
  const button = h(
    "button",
    { type: "button", class: "icon-button", "aria-label": LABEL[theme], title: LABEL[theme] },
    ICON[theme],
  );
  button.addEventListener("click", () => {
    theme = ORDER[(ORDER.indexOf(theme) + 1) % ORDER.length];
    apply(theme);
    try {
      if (theme === "system") localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, theme);
    } catch {}
    button.textContent = ICON[theme];
    button.setAttribute("aria-label", LABEL[theme]);
    button.title = LABEL[theme];
  });
  return button;
}
