/** `ok` green, `warn` yellow (reported, does not fail), `fail` red (exit code 1), `skip` when a check it needs failed. */
export type CheckStatus = "ok" | "warn" | "fail" | "skip";

export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
  /** What to do about a warn or fail. */
  hint?: string;
  /** Details for `--json` (the near-duplicate groups). */
  items?: unknown[];
}

/** `1 change`, `3 changes`. */
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
