/**
 * Time expressions in a search query, as ranges of time a memory may refer to
 * ("what did I do in May 2023", "last week", "on Monday"). Pure: the caller passes `now`.
 *
 * Calendar arithmetic is in UTC (memories' times are UTC instants; a day boundary may be off
 * by the user's UTC offset, which the smooth {@link timeFit} absorbs). Weeks start on Monday.
 * A bare month, weekday or season means its most recent occurrence that has begun ("May" in
 * June 2024 is May 2024, in April 2024 it is May 2023); a weekday is the most recent one
 * strictly before today ("on Monday", asked on a Monday, is a week ago). The expressions
 * understood are listed in docs/retrieval.md.
 */

/** A half-open range of time, in ms since the epoch: `from <= t < to`. */
export interface TimeRange {
  from: number;
  to: number;
}

const DAY = 86_400_000;
export const MONTHS = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];
const MONTH_ABBREVIATIONS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  couple: 2,
  "a couple of": 2,
  few: 3,
  "a few": 3,
};
/** Month names, full or abbreviated (with a day or a year beside them). */
const MONTH = `(${MONTHS.join("|")}|sept|${MONTH_ABBREVIATIONS.join("|")})\\.?`;
const ORDINAL = "(\\d{1,2})(?:st|nd|rd|th)?";
const NUMBER = `(\\d{1,3}|a couple of|a few|${Object.keys(NUMBER_WORDS).join("|")})`;
const UNIT = "(day|week|month|year)s?";
const SEASONS: Record<string, number> = { spring: 2, summer: 5, autumn: 8, fall: 8, winter: 11 }; // first month (0-based)

type Unit = "day" | "week" | "month" | "year";

function monthIndex(name: string): number {
  const short = name.replace(/\.$/, "").slice(0, 3);
  return MONTH_ABBREVIATIONS.indexOf(short);
}
const numberOf = (text: string) => (/^\d+$/.test(text) ? Number(text) : (NUMBER_WORDS[text] ?? NaN));
const utcDay = (time: number) => Math.floor(time / DAY) * DAY;
const dayRange = (year: number, month: number, day: number): TimeRange | null => {
  const from = Date.UTC(year, month, day);
  const date = new Date(from);
  // Date.UTC rolls 31 February over into March: such a date does not exist.
  if (date.getUTCMonth() !== ((month % 12) + 12) % 12 || date.getUTCDate() !== day) return null;
  return { from, to: from + DAY };
};
const monthRange = (year: number, month: number, months = 1): TimeRange => ({
  from: Date.UTC(year, month, 1),
  to: Date.UTC(year, month + months, 1),
});
const yearRange = (year: number): TimeRange => ({ from: Date.UTC(year, 0, 1), to: Date.UTC(year + 1, 0, 1) });
/** Monday 00:00 UTC of the week holding `time`. */
const weekStart = (time: number) => utcDay(time) - ((new Date(time).getUTCDay() + 6) % 7) * DAY;

/** The calendar unit holding `time`. */
function unitRange(unit: Unit, time: number): TimeRange {
  const date = new Date(time);
  if (unit === "day") return { from: utcDay(time), to: utcDay(time) + DAY };
  if (unit === "week") return { from: weekStart(time), to: weekStart(time) + 7 * DAY };
  if (unit === "month") return monthRange(date.getUTCFullYear(), date.getUTCMonth());
  return yearRange(date.getUTCFullYear());
}

/** `time` moved by `count` units (months and years by the calendar). */
function shift(time: number, unit: Unit, count: number): number {
  if (unit === "day") return time + count * DAY;
  if (unit === "week") return time + count * 7 * DAY;
  const date = new Date(time);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth() + (unit === "month" ? count : count * 12);
  // 31 January + 1 month is 28/29 February, not 2/3 March.
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Date.UTC(year, month, Math.min(date.getUTCDate(), lastDay)) + (time - utcDay(time));
}
const shiftRange = (range: TimeRange, unit: Unit, count: number): TimeRange => ({
  from: shift(range.from, unit, count),
  to: shift(range.to, unit, count),
});

/** A month (0-based) `months` long starting at `first`, most recently begun by `now` (a year earlier when `strictlyPast`). */
function recentMonths(first: number, months: number, now: number, strictlyPast: boolean): TimeRange {
  const current = new Date(now);
  let year = current.getUTCFullYear();
  if (Date.UTC(year, first, 1) > now) year--;
  if (strictlyPast && Date.UTC(year, first + months, 1) > now) year--;
  return monthRange(year, first, months);
}

interface Match {
  start: number;
  end: number;
  range: TimeRange;
}

type Rule = [RegExp, (groups: string[], now: number) => TimeRange | null];

/** The rules, most specific first: what one matches is masked from the later ones. */
const RULES: Rule[] = [
  // 2023-05-07, 2023-05-07T13:45:00Z, 2023/05/07
  [
    /\b(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:t[\d:.]+(?:z|[+-]\d{2}:?\d{2})?)?\b/g,
    ([y, m, d]) => dayRange(+y!, +m! - 1, +d!),
  ],
  // 2023-05
  [/\b(\d{4})-(\d{2})\b/g, ([y, m]) => (+m! >= 1 && +m! <= 12 ? monthRange(+y!, +m! - 1) : null)],
  // 7 May 2023, 7th of May, 2023
  [
    new RegExp(`\\b${ORDINAL}(?:\\s+of)?\\s+${MONTH},?\\s+(\\d{4})\\b`, "g"),
    ([d, m, y]) => dayRange(+y!, monthIndex(m!), +d!),
  ],
  // May 7, 2023, May 7th 2023
  [new RegExp(`\\b${MONTH}\\s+${ORDINAL},?\\s+(\\d{4})\\b`, "g"), ([m, d, y]) => dayRange(+y!, monthIndex(m!), +d!)],
  // summer of 2022, winter 2022 (winter runs into the next year)
  [/\b(spring|summer|autumn|fall|winter)\s+(?:of\s+)?(\d{4})\b/g, ([s, y]) => monthRange(+y!, SEASONS[s!]!, 3)],
  // May 2023, May of 2023
  [new RegExp(`\\b${MONTH},?\\s+(?:of\\s+)?(\\d{4})\\b`, "g"), ([m, y]) => monthRange(+y!, monthIndex(m!))],
  // 7 May, May 7th (most recent)
  [
    new RegExp(`\\b(?:${ORDINAL}(?:\\s+of)?\\s+${MONTH}|${MONTH}\\s+${ORDINAL})\\b`, "g"),
    ([d1, m1, m2, d2], now) => {
      const month = monthIndex((m1 ?? m2)!);
      const day = +(d1 ?? d2)!;
      const year = new Date(now).getUTCFullYear();
      const range = dayRange(year, month, day);
      return range && range.from > now ? dayRange(year - 1, month, day) : range;
    },
  ],
  [/\b(\d{4})\b/g, ([y]) => (+y! >= 1900 && +y! <= 2099 ? yearRange(+y!) : null)],
  [/\b(?:the\s+)?day\s+before\s+yesterday\b/g, (_, now) => unitRange("day", now - 2 * DAY)],
  [
    /\b(yesterday|today|tonight|this\s+morning|this\s+evening|tomorrow)\b/g,
    ([word], now) => unitRange("day", now + (word === "yesterday" ? -DAY : word === "tomorrow" ? DAY : 0)),
  ],
  [
    /\b(last|past|previous|this|next)\s+weekend\b/g,
    ([which], now) => {
      const saturday = weekStart(now) + 5 * DAY;
      // The week's weekend is its end, so "last weekend" is always the previous week's.
      const from = which === "this" ? saturday : which === "next" ? saturday + 7 * DAY : saturday - 7 * DAY;
      return { from, to: from + 2 * DAY };
    },
  ],
  [
    /\b(last|past|previous|this|next)\s+(week|month|year)\b/g,
    ([which, unit], now) => {
      const offset = which === "this" ? 0 : which === "next" ? 1 : -1;
      return unitRange(unit as Unit, shift(unitRange(unit as Unit, now).from, unit as Unit, offset));
    },
  ],
  [
    new RegExp(`\\b${NUMBER}\\s+${UNIT}\\s+ago\\b`, "g"),
    ([n, unit], now) => {
      const count = numberOf(n!);
      return Number.isFinite(count) ? unitRange(unit as Unit, shift(now, unit as Unit, -count)) : null;
    },
  ],
  // last summer, this winter, in the spring
  [
    /\b(last|this|in\s+the|during\s+the)\s+(spring|summer|autumn|fall|winter)\b/g,
    ([which, season], now) => recentMonths(SEASONS[season!]!, 3, now, which === "last"),
  ],
  // on Monday, last Friday, Sunday
  [
    new RegExp(`\\b(?:(?:on|last|past|this)\\s+)?(${WEEKDAYS.join("|")})\\b`, "g"),
    ([day], now) => {
      const today = utcDay(now);
      const back = ((new Date(today).getUTCDay() - WEEKDAYS.indexOf(day!) + 6) % 7) + 1; // 1..7 days ago
      return { from: today - back * DAY, to: today - back * DAY + DAY };
    },
  ],
  // in May, last March; "may" and "march" alone are verbs far more often than months
  [
    new RegExp(`\\b(?:(in|during|last|this|since|of|early|late|mid|until|by)\\s+)?(${MONTHS.join("|")})\\b`, "g"),
    ([which, month], now) => {
      if (!which && (month === "may" || month === "march")) return null;
      return recentMonths(MONTHS.indexOf(month!), 1, now, which === "last");
    },
  ],
];

/** "two days after" / "a week before" right before a date expression. */
const OFFSET_BEFORE = new RegExp(`\\b${NUMBER}\\s+${UNIT}\\s+(before|after)\\s+(?:the\\s+)?$`);
/** "since May 2023": from then until now. */
const SINCE_BEFORE = /\bsince\s+$/;

/** Queries longer than this are searched for time expressions in their first part only. */
const MAX_QUERY_CHARS = 2_000;

/**
 * The time ranges a query's time expressions name, in the order they appear; none when it
 * has none.
 *
 * @example
 * timeRanges("what did I do in May 2023?", new Date("2024-01-10T12:00:00Z"))
 * // [{ from: Date.UTC(2023, 4, 1), to: Date.UTC(2023, 5, 1) }]
 */
export function timeRanges(query: string, now: Date): TimeRange[] {
  const nowMs = now.getTime();
  if (!Number.isFinite(nowMs)) return [];
  let text = query
    .slice(0, MAX_QUERY_CHARS)
    .toLowerCase()
    .replace(/[\u2019']/g, "'");
  const original = text;
  const matches: Match[] = [];
  for (const [pattern, toRange] of RULES) {
    text = text.replace(pattern, (whole: string, ...rest: unknown[]) => {
      const index = rest.at(-2) as number;
      const groups = rest.slice(0, -2) as string[];
      const range = toRange(groups, nowMs);
      if (!range || !(range.from < range.to)) return whole;
      matches.push({ start: index, end: index + whole.length, range });
      return " ".repeat(whole.length); // masked: later rules do not see it again
    });
  }
  matches.sort((a, b) => a.start - b.start);
  const ranges: TimeRange[] = [];
  for (const match of matches) {
    let range = match.range;
    const before = original.slice(Math.max(0, match.start - 40), match.start);
    const offset = OFFSET_BEFORE.exec(before);
    if (offset) {
      const count = numberOf(offset[1]!);
      const unit = offset[2] as Unit;
      // "two days after 7 May" is a day; "a week after May 2023" stays as wide as May.
      if (Number.isFinite(count)) range = shiftRange(range, unit, offset[3] === "before" ? -count : count);
    } else if (SINCE_BEFORE.test(before) && range.from < nowMs) {
      range = { from: range.from, to: Math.max(nowMs, range.to) };
    }
    if (!ranges.some((r) => r.from === range.from && r.to === range.to)) ranges.push(range);
  }
  return ranges;
}

/**
 * How well a time fits the ranges, in [0, 1]: 1 inside one, and outside falling smoothly with
 * the distance measured in the range's own width (a half at one width away, 1/16 at two,
 * about 0 past three), so "May 2023" forgives a few days and "2023" a few months. The best
 * range counts; 0 when there are none.
 *
 * @example
 * timeFit([{ from: 0, to: 10 }], 15) // 0.5 ** 0.25 ≈ 0.84
 */
export function timeFit(ranges: TimeRange[], at: number): number {
  let best = 0;
  for (const { from, to } of ranges) {
    const width = Math.max(to - from, 1);
    const distance = at < from ? from - at : at >= to ? at - to : 0;
    const fit = 0.5 ** ((distance / width) ** 2);
    if (fit > best) best = fit;
  }
  return best;
}
