/**
 * Problems the reliability suites found in code outside their own files, left open for
 * their owners. A test for an open finding runs as `test.failing` (it must still fail:
 * once the bug is fixed it passes, `bun test` reports that, and the entry is removed
 * here). `npm run stress` sets MNEMO_RELIABILITY_STRICT=1, running them as plain tests,
 * so the full form shows every open finding as a failure.
 */
import { test } from "bun:test";

export const OPEN_FINDINGS: Record<string, string> = {};

export const STRICT = process.env.MNEMO_RELIABILITY_STRICT === "1";

/** Whether a finding is open and tolerated (everywhere but under `npm run stress`). */
export const tolerated = (finding: string) => Boolean(OPEN_FINDINGS[finding]) && !STRICT;

/**
 * `test`, or `test.failing` while the finding is open (plain `test` under stress);
 * `test.skip` when `skip` (bun cannot chain `.skipIf` on `test.failing`).
 */
export function findingTest(finding: string, skip = false): typeof test {
  if (skip) return test.skip as unknown as typeof test;
  return OPEN_FINDINGS[finding] && !STRICT ? (test.failing as unknown as typeof test) : test;
}
