/**
 * The web app's built files (web/dist: index.html, app.js, app.css, made by
 * scripts/build-app.ts), imported as text so that `bun build --compile` embeds them in
 * the binary. The imports are dynamic: a checkout whose app is not built yet still
 * starts (the app's pages then say how to build it) instead of failing to load.
 */
export const APP_FILES = ["index.html", "app.js", "app.css"] as const;
export type AppFile = (typeof APP_FILES)[number];
export type AppAssets = Record<AppFile, string>;

/** The policy sent with every page of the app: nothing from elsewhere, no inline script or style, no framing. */
export const APP_CSP =
  "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

let loaded: Promise<AppAssets | null> | undefined;

/** The embedded app, read once; null when web/dist was not built before this server (or binary) was. */
export function loadAppAssets(): Promise<AppAssets | null> {
  loaded ??= (async () => {
    try {
      const [html, js, css] = await Promise.all([
        // @ts-ignore web/dist exists once scripts/build-app.ts ran; the text import is what the compiler embeds.
        import("../../web/dist/index.html", { with: { type: "text" } }),
        // @ts-ignore see above
        import("../../web/dist/app.js", { with: { type: "text" } }),
        // @ts-ignore see above
        import("../../web/dist/app.css", { with: { type: "text" } }),
      ]);
      return { "index.html": String(html.default), "app.js": String(js.default), "app.css": String(css.default) };
    } catch {
      return null;
    }
  })();
  return loaded;
}
