/** Formatting shared by the views: times, sizes, counts. */
import { h } from "./dom";

const dateTime = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
});
const dateOnly = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric" });
const integer = new Intl.NumberFormat();

/** A <time> element: local date and time, the ISO value in `datetime`. */
export function time(iso: string | null | undefined, options: { dateOnly?: boolean } = {}): HTMLElement | string {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return h("time", { datetime: date.toISOString() }, (options.dateOnly ? dateOnly : dateTime).format(date));
}

/** "3 min", "2 h", "5 days": how long ago, for lag and last-used columns. */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "never";
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} days ago`;
}

export const count = (n: number) => integer.format(n);
export const plural = (n: number, one: string, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`;

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** The first line of a text, shortened, for labels ("Select memory: …"). */
export function excerpt(text: string, length = 60): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > length ? `${line.slice(0, length - 1)}…` : line;
}

/** Pretty JSON for display (metadata); `{}` shows as an em dash by the caller's choice. */
export const prettyJson = (value: unknown) => JSON.stringify(value, null, 2);
