/** Who is signed in, for the shell and the views. The secrets themselves live in api.ts. */
/** The signed-in user; escrow and the rest are asked for where they are shown. */
export interface SignedInUser {
  userId: string;
}

let current: SignedInUser | null = null;

export const currentUser = () => current;
export function setCurrentUser(user: SignedInUser | null): void {
  current = user;
}

/** Performance marks the app leaves for measurement (sign-in → first memories on screen). */
export const MARKS = {
  signedIn: "mnemo:signed-in",
  memoriesRendered: "mnemo:memories-rendered",
  searchInput: "mnemo:search-input",
  searchAnswered: "mnemo:search-answered",
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
