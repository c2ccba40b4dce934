/**
 * Reduced (inside `npm test`) or full (`npm run stress`, which sets
 * MNEMO_RELIABILITY=full) sizes for the reliability suites, and the figures they print.
 */
import { appendFileSync } from "node:fs";

export const FULL = process.env.MNEMO_RELIABILITY === "full";
export const BACKEND = process.env.MNEMO_TEST_DATABASE_URL ? "postgres" : "sqlite";

/** A count from the environment (e.g. MNEMO_FUZZ_CASES), else the mode's default. */
export function sized(envName: string, reduced: number, full: number): number {
  const given = Number(process.env[envName]);
  return Number.isInteger(given) && given > 0 ? given : FULL ? full : reduced;
}

/** The fuzzing seed: MNEMO_FUZZ_SEED to replay a failure, else a fresh one (printed). */
export const SEED =
  Number.isInteger(Number(process.env.MNEMO_FUZZ_SEED)) && process.env.MNEMO_FUZZ_SEED
    ? Number(process.env.MNEMO_FUZZ_SEED)
    : Math.floor(Math.random() * 2 ** 31);

/** Prints one figure line (and appends it to MNEMO_RELIABILITY_FIGURES, which stress.ts reads). */
export function figure(suite: string, text: string): void {
  const line = `[reliability ${BACKEND}] ${suite}: ${text}`;
  console.log(line);
  if (process.env.MNEMO_RELIABILITY_FIGURES) appendFileSync(process.env.MNEMO_RELIABILITY_FIGURES, `${line}\n`);
}
