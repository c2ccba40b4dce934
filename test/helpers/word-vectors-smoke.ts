/**
 * Entry of a tiny compiled binary (test/word-vectors.test.ts): loads the embedded word
 * vectors and prints what it found, so the test proves the file travels inside the binary.
 * Imported lazily, as the server's search side is: the module sits in a split chunk.
 */
import { words } from "../../src/search/analysis/analyzer.ts";

const { cosine, loadWordVectors, textVector } = await import("../../src/search/analysis/word-vectors.ts");

const vectors = await loadWordVectors();
const a = textVector(vectors, words("my puppy"))!;
const b = textVector(vectors, words("our pets"))!;
process.stdout.write(`${JSON.stringify({ size: vectors.size, dims: vectors.dims, related: cosine(a, b) > 0.3 })}\n`);
