/**
 * The time a memory refers to, as a caller gives it (`timestamp` on create, as mem0 takes it):
 * an ISO 8601 date or date-time, or Unix seconds. It becomes the memory's `createdAt`.
 *
 * - ISO: `2023-05-07`, `2023-05-07T13:45`, `2023-05-07T13:45:00.123Z`, `2023-05-07 13:45:00+02:00`.
 *   Without an offset the time is UTC (a date alone is midnight UTC), so the same text gives
 *   the same instant on every server whatever its time zone.
 * - A number: Unix seconds, fractions allowed (kept to the millisecond).
 * - Bounds: 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z. Stored times are ISO strings
 *   compared as text (the list order), which holds for four-digit years only; the upper bound
 *   also catches milliseconds sent as seconds (1.7e12 s is the year 55,000). Future times are
 *   accepted: a memory may be about a planned event.
 */
import { badRequest } from "./app-error";

export const TIMESTAMP_MIN_MS = 0;
export const TIMESTAMP_MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

/** Why a value is not a timestamp, or its time in ms since the epoch. */
export function readTimestamp(value: unknown): number | { problem: string } {
  let ms: number;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return { problem: "must be a finite number of Unix seconds" };
    ms = Math.round(value * 1000);
  } else if (typeof value === "string") {
    const parsed = parseIso(value.trim());
    if (parsed === null)
      return {
        problem: "must be an ISO 8601 date or date-time (2023-05-07, 2023-05-07T13:45:00Z) or a number of Unix seconds",
      };
    ms = parsed;
  } else {
    return { problem: "must be an ISO 8601 string or a number of Unix seconds" };
  }
  if (ms < TIMESTAMP_MIN_MS || ms > TIMESTAMP_MAX_MS) {
    return {
      problem:
        "must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z (as a number: Unix seconds, not milliseconds)",
    };
  }
  return ms;
}

/**
 * A timestamp as the ISO string stored in `createdAt`.
 *
 * @throws AppError 400 naming `field` when the value is not a timestamp or out of bounds.
 * @example
 * timestampToIso(1683475200) // "2023-05-07T16:00:00.000Z"
 * timestampToIso("7 May 2023") // throws 400 "timestamp: must be an ISO 8601 date …"
 */
export function timestampToIso(value: unknown, field = "timestamp"): string {
  const result = readTimestamp(value);
  if (typeof result !== "number") throw badRequest(`${field}: ${result.problem}`);
  return new Date(result).toISOString();
}

function parseIso(text: string): number | null {
  const m = ISO.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = "0", mi = "0", s = "0", fraction = "", offset = "Z"] = m;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return null;
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day); // Date.UTC would read years 0–99 as 1900–1999
  local.setUTCHours(hour, minute, second, Number(fraction.padEnd(3, "0").slice(0, 3)));
  if (local.getUTCDate() !== day || local.getUTCMonth() !== month - 1) return null; // 31 February
  const shift = offsetMinutes(offset);
  return shift === null ? null : local.getTime() - shift * 60_000;
}

/** "+02:00", "-0530", "+02" or "Z" in minutes east of UTC; null past ±23:59. */
function offsetMinutes(offset: string): number | null {
  if (offset === "Z" || offset === "z") return 0;
  const digits = offset.slice(1).replace(":", "");
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2) || "0");
  if (hours > 23 || minutes > 59) return null;
  return (offset[0] === "-" ? -1 : 1) * (hours * 60 + minutes);
}
