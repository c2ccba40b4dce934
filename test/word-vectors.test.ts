import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { words } from "../src/search/analysis/analyzer";
import { cosine, loadWordVectors, textVector, type WordVectors } from "../src/search/analysis/word-vectors";
import { tempDir } from "./helpers/server";

const vectors: WordVectors = await loadWordVectors();
const wordCosine = (a: string, b: string) => cosine(vectors.vector(a)!, vectors.vector(b)!);
const sentence = (text: string) => textVector(vectors, words(text))!;

describe("the word vectors", () => {
  test("load once: 50,000 words of 100 dimensions, the same object on every call", async () => {
    expect({ size: vectors.size, dims: vectors.dims }).toEqual({ size: 50_000, dims: 100 });
    expect(await loadWordVectors()).toBe(vectors);
    expect(Math.hypot(...vectors.commonComponent)).toBeCloseTo(1, 5);
  });

  test("related words are closer than unrelated ones", () => {
    expect(wordCosine("pets", "puppy")).toBeGreaterThan(wordCosine("pets", "mortgage") + 0.2);
    expect(wordCosine("hobbies", "passion")).toBeGreaterThan(wordCosine("hobbies", "mortgage") + 0.2);
    expect(wordCosine("allergies", "allergic")).toBeGreaterThan(0.6);
  });

  test("SIF weights: frequent words weigh little, rare and unknown words nearly 1", () => {
    expect(vectors.weight("the")).toBeLessThan(0.05);
    expect(vectors.weight("puppy")).toBeGreaterThan(0.99);
    expect(vectors.weight("qwzxv")).toBeGreaterThan(0.999);
    expect(vectors.weight("caroline's")).toBe(vectors.weight("caroline"));
  });

  test("text vectors: a question is closer to its paraphrased answer than to an unrelated sentence", () => {
    const mortgage = sentence("We refinanced the mortgage at a lower interest rate");
    expect(
      cosine(sentence("Do you have any pets?"), sentence("I adopted a puppy and walk him every morning")),
    ).toBeGreaterThan(cosine(sentence("Do you have any pets?"), mortgage) + 0.1);
    expect(
      cosine(sentence("What are your hobbies?"), sentence("Painting is my real passion, I do it every weekend")),
    ).toBeGreaterThan(cosine(sentence("What are your hobbies?"), mortgage) + 0.1);
  });

  test("text vectors are unit length; no known word gives null", () => {
    expect(Math.hypot(...sentence("a walk in the park"))).toBeCloseTo(1, 5);
    expect(textVector(vectors, words("qwzxv zzqxj"))).toBeNull();
    expect(textVector(vectors, [])).toBeNull();
    expect(vectors.vector("qwzxv")).toBeUndefined();
  });
});

describe("in a compiled binary", () => {
  const root = tempDir("mnemo-word-vectors-");
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test.skipIf(process.platform !== "linux")("the file is embedded and loads from the binary alone", async () => {
    const outfile = join(root, "smoke");
    const built = await Bun.build({
      entrypoints: [resolve(import.meta.dir, "helpers/word-vectors-smoke.ts")],
      root: resolve(import.meta.dir, ".."),
      compile: { outfile },
      format: "esm",
      splitting: true, // as scripts/build-binary.ts builds mnemo
    });
    expect(built.success).toBe(true);
    // Run from an empty dir: nothing outside the binary can be read.
    const result = Bun.spawnSync([outfile], { cwd: root, env: { PATH: "/usr/bin:/bin" } });
    expect({ exitCode: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() }).toEqual({
      exitCode: 0,
      stdout: `${JSON.stringify({ size: 50_000, dims: 100, related: true })}\n`,
      stderr: "",
    });
  });
});
