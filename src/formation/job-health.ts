import type { Executor } from "../db/store";
import { createFormationJobRepository } from "./jobs-repository";

/** Extraction jobs over every user as an operator's check reads them: counts by status, and the latest failure's reason (never content). */
export async function extractionJobHealth(
  tx: Executor,
): Promise<{ counts: Record<string, number>; latestError: () => Promise<string | null> }> {
  const jobs = createFormationJobRepository();
  return { counts: await jobs.counts(tx), latestError: () => jobs.latestError(tx) };
}
