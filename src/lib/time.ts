/** ISO 8601 timestamp of now (or of `ms`). */
export const isoNow = (ms = Date.now()) => new Date(ms).toISOString();

/** Parses durations like `90s`, `15m`, `24h`, `7d` into milliseconds; null when malformed. */
export function parseDuration(text: string): number | null {
  const match = /^(\d+)(s|m|h|d)$/.exec(text.trim());
  if (!match) return null;
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as "s" | "m" | "h" | "d"];
  const ms = Number(match[1]) * unit;
  return ms > 0 ? ms : null;
}
