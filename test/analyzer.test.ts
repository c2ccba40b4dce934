import { describe, expect, test } from "bun:test";
import { analyze, analyzeQuery, fold, words } from "../src/search/analysis/analyzer";

describe("fold", () => {
  test("drops accents, spells out letters that do not decompose, lower-cases", () => {
    expect(fold("Café Crème NAÏVE Straße Øresund Ǆ ﬁ")).toBe("cafe creme naive strasse oresund dz fi");
  });
});

describe("words", () => {
  test("keeps inner apostrophes (straight or curly), splits on everything else, in order", () => {
    expect(words("I don’t like Café-au-lait! Caroline's 'quoted' 3.5kg 2023")).toEqual([
      "i",
      "don't",
      "like",
      "cafe",
      "au",
      "lait",
      "caroline's",
      "quoted",
      "3",
      "5kg",
      "2023",
    ]);
  });

  test("a run of letters is one word in every script, as in the index's tokenizer", () => {
    expect(words("我喜欢猫 カタカナ 한국어 Ελληνικά")).toEqual(["我喜欢猫", "カタカナ", "한국어", "ελληνικα"]);
  });

  test("empty and punctuation-only input give no words", () => {
    expect(words("")).toEqual([]);
    expect(words("  ?! -- ''  ")).toEqual([]);
  });
});

describe("analyze", () => {
  test("inflections of a word share a term", () => {
    const [allergies, allergic, allergy] = ["allergies", "allergic", "allergy"].map((w) => analyze(w));
    expect(allergies).toEqual(allergic);
    expect(allergy).toEqual(allergic);
    expect(analyze("running runs run")).toEqual(["run", "run", "run"]);
    expect(analyze("hobbies hobby")).toEqual(["hobbi", "hobbi"]);
  });

  test("drops Lucene's English stop words, keeps numbers and accented words folded", () => {
    expect(analyze("The trip to the café was in May 2023, and it cost 40 euros")).toEqual([
      "trip",
      "cafe",
      "may",
      "2023",
      "cost",
      "40",
      "euro",
    ]);
  });

  test("is deterministic and empty for empty input", () => {
    expect(analyze("")).toEqual([]);
    expect(analyze("Caroline's puppies")).toEqual(analyze("Caroline's puppies"));
  });

  test("very long input is analysed in linear time (a million characters)", () => {
    const text = "allergic reactions to peanuts happen ".repeat(27_000) + "x".repeat(100_000);
    const terms = analyze(text);
    // The last word is too long to be English: no term, as in the full-text index.
    expect(terms.length).toBe(27_000 * 4);
    expect(terms.every((t) => t.length <= 40)).toBe(true);
  });
});

describe("analyzeQuery", () => {
  test("keeps a question's content words only", () => {
    expect(analyzeQuery("What did I say about my allergies?")).toEqual(["say", "allerg"]);
    expect(analyzeQuery("When did Caroline go to the LGBTQ support group?")).toEqual([
      "carolin",
      "go",
      "lgbtq",
      "support",
      "group",
    ]);
  });

  test("falls back to the index stop list when every word is a query stop word", () => {
    expect(analyzeQuery("who were they")).toEqual(["who", "were"]);
    expect(analyzeQuery("the and of")).toEqual([]);
    expect(analyzeQuery("")).toEqual([]);
  });
});
