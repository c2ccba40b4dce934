/**
 * Mnemo's web app: boots into the sign-in page or, with a session, the app. Served by the
 * server at /app under a strict Content-Security-Policy: this bundle is the only script.
 */
import "./app.css";
import "./views.css";
import { forgetSession, me, onSignedOut, signInLinkUser, signInWithToken, signOut } from "./api";
import { h } from "./dom";
import { appPath, navigate, render, route, startRouter, stopRouter } from "./router";
import { currentUser, markSignedIn, setCurrentUser } from "./session";
import { mountShell, setTitle } from "./shell";
import { installShortcuts } from "./shortcuts";
import { initTheme } from "./theme";
import { toast, toastError, toastRegion } from "./toast";
import { memoriesView } from "./views/memories";
import { memoryDetailView } from "./views/memory-detail";
import { memoryProposalsView } from "./views/memory-proposals";
import { clearUndo } from "./views/memory-undo";
import { serverView } from "./views/server";
import { confirmAccountSwitch, describeLinkFailure, renderSignIn } from "./views/signin";
import { workspaceView } from "./views/workspace";
import { workspacesView } from "./views/workspaces";

route("/memories", memoriesView);
route("/memories/proposals", memoryProposalsView);
route("/memories/:id", memoryDetailView);
route("/workspaces", workspacesView);
route("/workspaces/:workspaceId", workspaceView);
route("/workspaces/:workspaceId/:tab", workspaceView);
route("/workspaces/:workspaceId/:tab/:itemId", workspaceView);
route("/server", serverView);

function notFoundView({ outlet }: { outlet: HTMLElement }): void {
  setTitle("Not found");
  outlet.append(
    h("h1", { tabindex: -1 }, "Not found"),
    h("p", null, "Nothing lives at this address. ", h("a", { href: "/app/memories" }, "Go to your memories"), "."),
  );
}

/** Shows the app; `userId` comes from a sign-in that just answered, else GET /v1/me asks. */
async function enterApp(userId?: string): Promise<void> {
  const user = userId ? { userId } : await me();
  setCurrentUser(user);
  startRouter(
    mountShell(user, () => void leave()),
    notFoundView,
  );
  if (appPath() === "/") await navigate("/memories", { replace: true, focus: false });
  else await render(false);
}

function showSignIn(message?: string, tone: "error" | "info" = "error"): void {
  stopRouter();
  setCurrentUser(null);
  forgetSession();
  clearUndo();
  toastRegion().replaceChildren();
  renderSignIn({ message, tone, onStart: markSignedIn, onSignedIn: (userId) => enterApp(userId) });
}

async function leave(): Promise<void> {
  try {
    await signOut();
  } catch (error) {
    return void toastError(error);
  }
  history.replaceState(null, "", "/app/");
  showSignIn("You are signed out.", "info");
}

/** The one-time token of `/app/#signin=<token>`, taken out of the address bar at once. */
function takeSignInToken(): string | null {
  const match = /^#signin=([^&]*)/.exec(location.hash);
  if (!match) return null;
  history.replaceState(null, "", location.pathname + location.search);
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return match[1];
  }
}

/** Signs in with a link's token on the sign-in page (no session open), entering the app once it answers. */
async function signInWithLink(token: string): Promise<void> {
  markSignedIn();
  renderSignIn({ pending: "Signing you in…", onSignedIn: (userId) => enterApp(userId) });
  let userId: string;
  try {
    userId = await signInWithToken(token);
  } catch (error) {
    return showSignIn(describeLinkFailure(error));
  }
  return enterApp(userId);
}

/**
 * A link opened while this browser holds a session of `current`: nothing is used before
 * the user says so. The link's user is read first (the link stays unused); the same user
 * keeps the session, another is asked about. Declining leaves the link unused.
 */
async function offerLink(token: string, current: string): Promise<void> {
  let next: string;
  try {
    next = (await signInLinkUser(token)).userId;
  } catch (error) {
    return void toast(describeLinkFailure(error), { tone: "error" });
  }
  if (next === current) return void toast(`You are already signed in as ${current}.`);
  if (!(await confirmAccountSwitch(current, next))) return;
  stopRouter();
  clearUndo();
  forgetSession();
  markSignedIn();
  let userId: string;
  try {
    userId = await signInWithToken(token);
  } catch (error) {
    // The session held before is still open: back to it, saying why.
    await enterApp().catch(() => showSignIn());
    return void toast(describeLinkFailure(error), { tone: "error" });
  }
  return enterApp(userId);
}

/** A sign-in link pasted into a tab where the app is open (only its fragment changed). */
function onHashChange(): void {
  const token = takeSignInToken();
  if (token === null) return;
  const user = currentUser();
  void (user ? offerLink(token, user.userId) : signInWithLink(token));
}

async function boot(): Promise<void> {
  initTheme();
  installShortcuts();
  let ended = false;
  onSignedOut(() => {
    if (ended || !document.getElementById("main")?.classList.contains("main")) return;
    ended = true;
    showSignIn("Your session has ended. Sign in again.");
    queueMicrotask(() => (ended = false));
  });
  window.addEventListener("hashchange", onHashChange);
  const token = takeSignInToken();
  // Is a session open? A link must not replace it unasked.
  const current = await me().catch(() => null);
  if (token !== null && current === null) return signInWithLink(token);
  if (current === null) return showSignIn();
  await enterApp(current.userId);
  if (token !== null) await offerLink(token, current.userId);
}

void boot();
