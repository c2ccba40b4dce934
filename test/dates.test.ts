import { describe, expect, test } from "bun:test";
import { timeFit, timeRanges, type TimeRange } from "../src/search/analysis/dates";

/** Wednesday 12 June 2024, 15:00 UTC. */
const now = new Date("2024-06-12T15:00:00Z");
const day = (iso: string, days = 1): TimeRange => ({
  from: Date.parse(`${iso}T00:00:00Z`),
  to: Date.parse(`${iso}T00:00:00Z`) + days * 86_400_000,
});
const span = (from: string, to: string): TimeRange => ({
  from: Date.parse(`${from}T00:00:00Z`),
  to: Date.parse(`${to}T00:00:00Z`),
});
const ranges = (query: string) => timeRanges(query, now);

describe("timeRanges", () => {
  test("absolute dates: ISO, day month year in either order, month year, year", () => {
    expect(ranges("what happened on 2023-05-07?")).toEqual([day("2023-05-07")]);
    expect(ranges("at 2023-05-07T13:45:00Z")).toEqual([day("2023-05-07")]);
    expect(ranges("the 7th of May, 2023 and May 8, 2023")).toEqual([day("2023-05-07"), day("2023-05-08")]);
    expect(ranges("What did Caroline do in May 2023?")).toEqual([span("2023-05-01", "2023-06-01")]);
    expect(ranges("in 2023-02")).toEqual([span("2023-02-01", "2023-03-01")]);
    expect(ranges("trips in 2022")).toEqual([span("2022-01-01", "2023-01-01")]);
    expect(ranges("Sept. 3rd, 2021")).toEqual([day("2021-09-03")]);
  });

  test("impossible dates are not dates", () => {
    expect(ranges("31 February 2023")).toEqual([span("2023-02-01", "2023-03-01")]); // the month still counts
    expect(ranges("2023-13-45")).toEqual([span("2023-01-01", "2024-01-01")]); // the year still counts
  });

  test("a bare month or day is its most recent occurrence; 'may' and 'march' need a preposition", () => {
    expect(ranges("in May")).toEqual([span("2024-05-01", "2024-06-01")]);
    expect(ranges("last June")).toEqual([span("2023-06-01", "2023-07-01")]);
    expect(ranges("this June")).toEqual([span("2024-06-01", "2024-07-01")]);
    expect(ranges("in July")).toEqual([span("2023-07-01", "2023-08-01")]);
    expect(ranges("August")).toEqual([span("2023-08-01", "2023-09-01")]);
    expect(ranges("may I ask what we march for")).toEqual([]);
    expect(ranges("on 20 July")).toEqual([day("2023-07-20")]);
    expect(ranges("June 3rd")).toEqual([day("2024-06-03")]);
  });

  test("days relative to now", () => {
    expect(ranges("yesterday")).toEqual([day("2024-06-11")]);
    expect(ranges("what did I eat today")).toEqual([day("2024-06-12")]);
    expect(ranges("the day before yesterday")).toEqual([day("2024-06-10")]);
    expect(ranges("3 days ago")).toEqual([day("2024-06-09")]);
    expect(ranges("a couple of days ago")).toEqual([day("2024-06-10")]);
  });

  test("weeks, months and years relative to now (weeks start on Monday)", () => {
    expect(ranges("last week")).toEqual([day("2024-06-03", 7)]);
    expect(ranges("this week")).toEqual([day("2024-06-10", 7)]);
    expect(ranges("two weeks ago")).toEqual([day("2024-05-27", 7)]);
    expect(ranges("last month")).toEqual([span("2024-05-01", "2024-06-01")]);
    expect(ranges("this month")).toEqual([span("2024-06-01", "2024-07-01")]);
    expect(ranges("6 months ago")).toEqual([span("2023-12-01", "2024-01-01")]);
    expect(ranges("last year")).toEqual([span("2023-01-01", "2024-01-01")]);
    expect(ranges("this year")).toEqual([span("2024-01-01", "2025-01-01")]);
    expect(ranges("a year ago")).toEqual([span("2023-01-01", "2024-01-01")]);
    expect(ranges("last weekend")).toEqual([day("2024-06-08", 2)]);
  });

  test("weekdays: the most recent one before today", () => {
    expect(ranges("on Monday")).toEqual([day("2024-06-10")]);
    expect(ranges("last Friday")).toEqual([day("2024-06-07")]);
    expect(ranges("what did we do on wednesday")).toEqual([day("2024-06-05")]);
  });

  test("seasons, with a year or the most recent", () => {
    expect(ranges("in the summer of 2022")).toEqual([span("2022-06-01", "2022-09-01")]);
    expect(ranges("winter 2022")).toEqual([span("2022-12-01", "2023-03-01")]);
    expect(ranges("last summer")).toEqual([span("2023-06-01", "2023-09-01")]);
    expect(ranges("in the spring")).toEqual([span("2024-03-01", "2024-06-01")]);
  });

  test("offsets from a date, and since", () => {
    expect(ranges("two days after 7 May 2023")).toEqual([day("2023-05-09")]);
    expect(ranges("a week before 2023-05-07")).toEqual([day("2023-04-30")]);
    expect(ranges("a month after 31 January 2023")).toEqual([day("2023-02-28")]);
    expect(ranges("since March 2024")).toEqual([{ from: Date.parse("2024-03-01T00:00:00Z"), to: now.getTime() }]);
  });

  test("several expressions in order, each once; none in a plain query", () => {
    expect(ranges("in 2022 or yesterday or in 2022")).toEqual([span("2022-01-01", "2023-01-01"), day("2024-06-11")]);
    expect(ranges("what are Melanie's hobbies?")).toEqual([]);
    expect(ranges("")).toEqual([]);
    expect(timeRanges("yesterday", new Date(Number.NaN))).toEqual([]);
  });

  test("long input is bounded", () => {
    expect(ranges(`${"yesterday, in May 2023.  ".repeat(100_000)}`)).toEqual([
      day("2024-06-11"),
      span("2023-05-01", "2023-06-01"),
    ]);
  });
});

describe("timeFit", () => {
  const may = span("2023-05-01", "2023-06-01");
  const width = may.to - may.from;
  test("1 inside, a half one width away, falling smoothly to ~0, the best range counting", () => {
    expect(timeFit([may], may.from)).toBe(1);
    expect(timeFit([may], may.to - 1)).toBe(1);
    expect(timeFit([may], may.to + width)).toBeCloseTo(0.5, 10);
    expect(timeFit([may], may.from - 2 * width)).toBeCloseTo(1 / 16, 10);
    expect(timeFit([may], may.to + 4 * width)).toBeLessThan(1e-4);
    expect(timeFit([may], may.to + width / 10)).toBeGreaterThan(0.99);
    expect(timeFit([day("2020-01-01"), may], may.from + 1)).toBe(1);
    expect(timeFit([], may.from)).toBe(0);
  });
});
