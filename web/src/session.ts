/** Who is signed in, for the shell and the views. The secrets themselves live in api.ts. */
import type { Me } from "./api-types";

let current: Me | null = null;

export const currentUser = () => current;
export function setCurrentUser(user: Me | null): void {
  current = user;
}

/** Performance marks the app leaves for measurement (sign-in → first memories on screen). */
export const MARKS = {
  signedIn: "mnemo:signed-in",
  memoriesRendered: "mnemo:memories-rendered",
  searchInput: "mnemo:search-input",
  searchRendered: "mnemo:search-rendered",
} as const;

let awaitingFirstRender = false;
/** Marks the sign-in; the memories view marks its first render after it. */
export function markSignedIn(): void {
  performance.mark(MARKS.signedIn);
  awaitingFirstRender = true;
}
export function markMemoriesRendered(): void {
  if (!awaitingFirstRender) return;
  awaitingFirstRender = false;
  performance.mark(MARKS.memoriesRendered);
  performance.measure("mnemo:sign-in-to-memories", MARKS.signedIn, MARKS.memoriesRendered);
}
