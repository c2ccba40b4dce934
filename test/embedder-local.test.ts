import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { EmbedderUnavailableError } from "../src/search/embedders/embedder.ts";
import {
  WordPieceTokenizer,
  checkModelFiles,
  createLocalEmbedder,
  getModelSpec,
  pullModel,
  type LocalEmbedderOptions,
} from "../src/search/embedders/local/index.ts";
import { buildBinary } from "../scripts/build-binary.ts";
import { type FakeHub, startFakeHub } from "./helpers/fake-hub.ts";
import { TINY_VOCAB, tinyModelFiles, tinyTokenizerJson, writeTinyModel } from "./helpers/tiny-model.ts";

const MINILM = "all-MiniLM-L6-v2";
const MINILM_REPO = "Xenova/all-MiniLM-L6-v2";
const REAL_TOKENIZER_DIR = join(import.meta.dir, "..", "..", "shared", "models", "all-MiniLM-L6-v2-tokenizer");

let root: string;
let hub: FakeHub;
let dirCount = 0;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "mnemo-embedder-local-"));
  hub = startFakeHub();
  hub.setRepo(MINILM_REPO, tinyModelFiles());
});

afterAll(async () => {
  await hub.stop();
  rmSync(root, { recursive: true, force: true });
});

/** A fresh, empty models dir. */
function modelsDir(): string {
  const dir = join(root, `models-${++dirCount}`);
  mkdirSync(dir);
  return dir;
}

function embedderOn(dir: string, overrides: Partial<LocalEmbedderOptions> = {}) {
  const logs: string[] = [];
  const embedder = createLocalEmbedder({
    modelsDir: dir,
    model: MINILM,
    hubUrl: hub.url,
    autoDownload: false,
    pins: false,
    log: (line) => logs.push(line),
    ...overrides,
  });
  return { embedder, logs };
}

function cosine(a: Float32Array, b: Float32Array): number {
  return a.reduce((sum, value, i) => sum + value * b[i], 0);
}

function norm(vector: Float32Array): number {
  return Math.sqrt(cosine(vector, vector));
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("WordPiece tokenizer", () => {
  const tokenizer = WordPieceTokenizer.fromTokenizerJson(JSON.parse(tinyTokenizerJson()));

  test("lower-cases, strips accents, splits punctuation and word pieces", () => {
    expect({
      punctuation: tokenizer.tokenize("Hello, WORLD!"),
      accents: tokenizer.tokenize("Naïve CAFÉ"),
      apostrophe: tokenizer.tokenize("Don't"),
      pieces: tokenizer.tokenize("unaffable cats"),
      unknownWord: tokenizer.tokenize("zebra cat"),
      unknownPiece: tokenizer.tokenize("catx"),
      cjk: tokenizer.tokenize("猫cat"),
      controls: tokenizer.tokenize("cat\tdog\u0000\u200b\npet"),
    }).toEqual({
      punctuation: ["hello", ",", "world", "!"],
      accents: ["naive", "cafe"],
      apostrophe: ["don", "'", "t"],
      pieces: ["un", "##aff", "##able", "cat", "##s"],
      unknownWord: ["[UNK]", "cat"],
      unknownPiece: ["[UNK]"],
      cjk: ["[UNK]", "cat"],
      controls: ["cat", "dog", "pet"],
    });
  });

  test("adds [CLS]/[SEP], truncates to the model's length and pads batches", () => {
    const id = (token: string) => TINY_VOCAB.indexOf(token);
    const long = tokenizer.encode("cat dog pizza pasta train", 5);
    const batch = tokenizer.toBatch([tokenizer.encode("cat", 8), tokenizer.encode("cat dog", 8)]);
    expect({ long, batch }).toEqual({
      long: [id("[CLS]"), id("cat"), id("dog"), id("pizza"), id("[SEP]")],
      batch: {
        batchSize: 2,
        sequenceLength: 4,
        inputIds: new BigInt64Array([2, id("cat"), 3, 0, 2, id("cat"), id("dog"), 3].map(BigInt)),
        attentionMask: new BigInt64Array([1, 1, 1, 0, 1, 1, 1, 1].map(BigInt)),
        tokenTypeIds: new BigInt64Array(8),
      },
    });
  });

  test("vocab.txt and tokenizer.json give the same ids", () => {
    const fromVocab = WordPieceTokenizer.fromVocabText(`${TINY_VOCAB.join("\n")}\n`);
    const text = "My kitten's fur, the PIZZA dinner; unaffable trains!";
    expect(fromVocab.encode(text, 64)).toEqual(tokenizer.encode(text, 64));
  });

  test.skipIf(!existsSync(REAL_TOKENIZER_DIR))("matches the real MiniLM vocabulary", async () => {
    const real = await WordPieceTokenizer.fromDirectory(REAL_TOKENIZER_DIR);
    const vocab = readFileSync(join(REAL_TOKENIZER_DIR, "vocab.txt"), "utf8").split("\n");
    const ids = (tokens: string[]) => tokens.map((token) => vocab.indexOf(token));
    const fromVocabTxt = WordPieceTokenizer.fromVocabText(vocab.join("\n"));
    const sentence = "Héllo, WORLD! Don't unaffable tokenization";
    expect({
      hello: real.encode("hello world", 256),
      sentence: real.encode(sentence, 256),
      email: real.encode("e-mail bob@example.com", 256),
      truncated: real.encode("hello world", 3),
      sameFromVocabTxt: fromVocabTxt.encode(sentence, 256),
    }).toEqual({
      hello: [101, 7592, 2088, 102],
      sentence: ids([
        "[CLS]",
        "hello",
        ",",
        "world",
        "!",
        "don",
        "'",
        "t",
        "una",
        "##ffa",
        "##ble",
        "token",
        "##ization",
        "[SEP]",
      ]),
      email: ids(["[CLS]", "e", "-", "mail", "bob", "@", "example", ".", "com", "[SEP]"]),
      truncated: [101, 7592, 102],
      sameFromVocabTxt: real.encode(sentence, 256),
    });
  });
});

describe("local embedder on the tiny model", () => {
  test("vectors are normalised, deterministic, and related texts are closer", async () => {
    const dir = modelsDir();
    writeTinyModel(join(dir, MINILM));
    const { embedder, logs } = embedderOn(dir);
    const texts = ["my cat and dog", "the kitten and puppy", "pizza with cheese"];
    const [cats, kittens, pizza] = await embedder.embed(texts, "document");
    const again = await embedder.embed(texts, "document");
    expect({
      provider: embedder.provider,
      spaceId: embedder.spaceId,
      status: embedder.status(),
      dimensions: [cats.length, kittens.length, pizza.length],
      norms: [cats, kittens, pizza].map((v) => Number(norm(v).toFixed(5))),
      deterministic: again[0].every((value, i) => value === cats[i]),
      relatedCloser: cosine(cats, kittens) > cosine(cats, pizza) + 0.3,
      logs: logs.map((line) => line.replace(/\d+ ms/, "N ms")),
    }).toEqual({
      provider: "local",
      spaceId: "local:all-MiniLM-L6-v2",
      status: { state: "ready", inWorker: true },
      dimensions: [384, 384, 384],
      norms: [1, 1, 1],
      deterministic: true,
      relatedCloser: true,
      logs: ["local embedder: model all-MiniLM-L6-v2 ready (384-d, loaded in N ms)"],
    });
    await embedder.close();
  });

  test("batching and length sorting give the same vectors as single calls, in and out of a worker", async () => {
    const dir = modelsDir();
    writeTinyModel(join(dir, MINILM));
    const texts = Array.from({ length: 11 }, (_, i) => `${"my dog ".repeat(i % 4)}went on a trip to paris number ${i}`);
    const batched = embedderOn(dir, { batchSize: 4 }).embedder;
    const inThread = embedderOn(dir, { useWorker: false }).embedder;
    const together = await batched.embed(texts, "document");
    const alone = await Promise.all(texts.map(async (text) => (await inThread.embed([text], "document"))[0]));
    const largestDifference = Math.max(
      ...together.flatMap((vector, i) => Array.from(vector, (value, j) => Math.abs(value - alone[i][j]))),
    );
    expect({ count: together.length, inWorker: inThread.status().inWorker, close: largestDifference < 1e-5 }).toEqual({
      count: 11,
      inWorker: false,
      close: true,
    });
    await Promise.all([batched.close(), inThread.close()]);
  });

  test("bge-style models prefix queries; MiniLM does not", async () => {
    const dir = modelsDir();
    const bge = getModelSpec("bge-small-en-v1.5");
    writeTinyModel(join(dir, bge.name));
    writeTinyModel(join(dir, MINILM));
    const bgeEmbedder = embedderOn(dir, { model: bge.name }).embedder;
    const miniEmbedder = embedderOn(dir).embedder;
    const [bgeQuery] = await bgeEmbedder.embed(["cat"], "query");
    const [bgePrefixed, bgeDocument] = await bgeEmbedder.embed([`${bge.queryPrefix}cat`, "cat"], "document");
    const [miniQuery] = await miniEmbedder.embed(["cat"], "query");
    const [miniDocument] = await miniEmbedder.embed(["cat"], "document");
    expect({
      spaceId: bgeEmbedder.spaceId,
      queryIsPrefixedDocument: cosine(bgeQuery, bgePrefixed) > 0.99999,
      queryDiffersFromDocument: cosine(bgeQuery, bgeDocument) < 0.999,
      miniLmSymmetric: cosine(miniQuery, miniDocument) > 0.99999,
    }).toEqual({
      spaceId: "local:bge-small-en-v1.5",
      queryIsPrefixedDocument: true,
      queryDiffersFromDocument: true,
      miniLmSymmetric: true,
    });
    await Promise.all([bgeEmbedder.close(), miniEmbedder.close()]);
  });

  test("without a model: creation returns at once, embed says why, files appearing later make it work", async () => {
    const dir = modelsDir();
    const { embedder, logs } = embedderOn(dir);
    const stateAtCreation = embedder.status().state;
    const first = await embedder.embed(["cat"], "query").catch((error) => error);
    const second = await embedder.embed(["cat"], "query").catch((error) => error);
    writeTinyModel(join(dir, MINILM));
    const [vector] = await embedder.embed(["cat"], "query");
    expect({
      stateAtCreation,
      unavailable: first instanceof EmbedderUnavailableError && second instanceof EmbedderUnavailableError,
      message: first.message,
      failureLogs: logs.filter((line) => !line.includes("ready")),
      dimension: vector.length,
    }).toEqual({
      stateAtCreation: "loading",
      unavailable: true,
      message: `local embedder: model all-MiniLM-L6-v2 is unavailable: not found in ${join(dir, MINILM)} and download is disabled`,
      failureLogs: [
        `local embedder: model all-MiniLM-L6-v2 is unavailable: not found in ${join(dir, MINILM)} and download is disabled; search uses full text until \`mnemo models pull all-MiniLM-L6-v2\` succeeds`,
      ],
      dimension: 384,
    });
    await embedder.close();
  });
});

describe("model download from the hub", () => {
  test("auto-download fetches, verifies and records every file, then the model runs", async () => {
    const dir = modelsDir();
    const { embedder, logs } = embedderOn(dir, { autoDownload: true });
    expect(await embedder.whenSettled()).toBe(true);
    const manifest = JSON.parse(readFileSync(join(dir, MINILM, "manifest.json"), "utf8"));
    const [vector] = await embedder.embed(["hello world"], "query");
    const files = tinyModelFiles();
    expect({
      manifestFiles: manifest.files,
      hub: manifest.hub,
      leftovers: readdirSync(dir).filter((name) => name.startsWith(".pull")),
      dimension: vector.length,
      logs: logs.map((line) => line.replace(/\d+ ms/, "N ms")),
    }).toEqual({
      manifestFiles: {
        "tokenizer.json": { sha256: sha256(files["tokenizer.json"]), size: files["tokenizer.json"].byteLength },
        "config.json": { sha256: sha256(files["config.json"]), size: files["config.json"].byteLength },
        "onnx/model_quantized.onnx": {
          sha256: sha256(files["onnx/model_quantized.onnx"]),
          size: files["onnx/model_quantized.onnx"].byteLength,
        },
      },
      hub: hub.url,
      leftovers: [],
      dimension: 384,
      logs: [
        `local embedder: model all-MiniLM-L6-v2 not found in ${join(dir, MINILM)}; downloading from ${hub.url}`,
        "local embedder: model all-MiniLM-L6-v2 ready (384-d, loaded in N ms)",
      ],
    });
    await embedder.close();
  });

  test("a corrupted file is rejected and nothing is left in place", async () => {
    const dir = modelsDir();
    hub.setFault(MINILM_REPO, "onnx/model_quantized.onnx", "corrupt");
    const error = await pullModel({ modelsDir: dir, model: MINILM, hubUrl: hub.url, pins: false }).catch((e) => e);
    hub.setFault(MINILM_REPO, "onnx/model_quantized.onnx", undefined);
    expect({ message: error.message.replace(/[0-9a-f]{64}/g, "<sha>"), contents: readdirSync(dir) }).toEqual({
      message: "checksum mismatch for onnx/model_quantized.onnx: hub sha256 <sha>, got <sha>",
      contents: [],
    });
  });

  test("a 404 leaves the server-side embedder unavailable with a clear reason; a later pull fixes it", async () => {
    const dir = modelsDir();
    hub.setFault(MINILM_REPO, "tokenizer.json", "missing");
    const { embedder, logs } = embedderOn(dir, { autoDownload: true });
    const stateAtCreation = embedder.status().state;
    expect(await embedder.whenSettled()).toBe(false);
    const error = await embedder.embed(["cat"], "query").catch((e) => e);
    await embedder.embed(["cat"], "query").catch(() => {});
    hub.setFault(MINILM_REPO, "tokenizer.json", undefined);
    const pulled = await pullModel({ modelsDir: dir, model: MINILM, hubUrl: hub.url, pins: false });
    const [vector] = await embedder.embed(["cat"], "query");
    const reason = `model all-MiniLM-L6-v2 not found in ${join(dir, MINILM)} and download failed (${hub.url}/${MINILM_REPO}/resolve/main/tokenizer.json: HTTP 404)`;
    expect({
      stateAtCreation,
      unavailable: error instanceof EmbedderUnavailableError,
      message: error.message,
      failureLogs: logs.filter((line) => line.includes("failed")),
      downloaded: pulled.downloaded,
      dimension: vector.length,
    }).toEqual({
      stateAtCreation: "loading",
      unavailable: true,
      message: `local embedder: ${reason}`,
      failureLogs: [
        `local embedder: ${reason}; search uses full text until \`mnemo models pull all-MiniLM-L6-v2\` succeeds`,
      ],
      downloaded: true,
      dimension: 384,
    });
    await embedder.close();
  });

  test("after a failed download, a call past retryAfterMs downloads again in the background", async () => {
    const dir = modelsDir();
    hub.setFault(MINILM_REPO, "onnx/model_quantized.onnx", "missing");
    const { embedder } = embedderOn(dir, { autoDownload: true, retryAfterMs: 0 });
    const firstAttempt = await embedder.whenSettled();
    hub.setFault(MINILM_REPO, "onnx/model_quantized.onnx", undefined);
    // This call starts the retry; it does not wait for a download, so it still falls back.
    const duringRetry = await embedder.embed(["cat"], "query").catch((e) => e);
    const retried = await embedder.whenSettled();
    const [vector] = await embedder.embed(["cat"], "query");
    const progress = /\((starting|\d+%)\)$/;
    expect({
      firstAttempt,
      duringRetry: duringRetry.message.replace(progress, "(…)"),
      retried,
      dimension: vector.length,
    }).toEqual({
      firstAttempt: false,
      duringRetry: "local embedder: model all-MiniLM-L6-v2 is downloading (…)",
      retried: true,
      dimension: 384,
    });
    await embedder.close();
  });

  test("optional files may be missing; a second pull downloads nothing; tampering is detected", async () => {
    const dir = modelsDir();
    hub.setFault(MINILM_REPO, "config.json", "missing");
    const first = await pullModel({ modelsDir: dir, model: MINILM, hubUrl: hub.url, pins: false });
    hub.setFault(MINILM_REPO, "config.json", undefined);
    const requestsBefore = hub.requests.length;
    const second = await pullModel({ modelsDir: dir, model: MINILM, hubUrl: hub.url, pins: false });
    const requestsForSecond = hub.requests.length - requestsBefore;
    writeFileSync(join(dir, MINILM, "tokenizer.json"), tinyTokenizerJson().replace("cat", "cot"));
    const tampered = await checkModelFiles(dir, getModelSpec(MINILM, { pins: false }));
    const { embedder } = embedderOn(dir);
    const error = await embedder.embed(["cat"], "query").catch((e) => e);
    expect({
      files: first.files.map((file) => file.path),
      second: second.downloaded,
      requestsForSecond,
      tampered: { state: tampered.state, problem: tampered.problem?.replace(/[0-9a-f]{12}…/g, "<sha>…") },
      unavailable: error instanceof EmbedderUnavailableError && error.message.includes("is corrupt"),
    }).toEqual({
      files: ["tokenizer.json", "onnx/model_quantized.onnx"],
      second: false,
      requestsForSecond: 0,
      tampered: { state: "corrupt", problem: "checksum mismatch for tokenizer.json (expected <sha>…, got <sha>…)" },
      unavailable: true,
    });
    await embedder.close();
  });
});

describe("compiled binary", () => {
  test.skipIf(process.platform !== "linux")(
    "runs the model with the embedded onnxruntime library and worker",
    async () => {
      const dir = modelsDir();
      writeTinyModel(join(dir, MINILM));
      const { outfile } = await buildBinary({ entry: "scripts/embed-smoke.ts", outfile: join(root, "embed-smoke") });
      // Run from an empty dir, far from node_modules, so nothing can be loaded from disk.
      const cwd = mkdtempSync(join(root, "cwd-"));
      const run = Bun.spawnSync([outfile, dir, MINILM, "my cat and dog", "off"], {
        cwd,
        env: { PATH: process.env.PATH ?? "" },
      });
      const { embedder } = embedderOn(dir);
      const [expected] = await embedder.embed(["my cat and dog"], "document");
      const output = run.exitCode === 0 ? JSON.parse(run.stdout.toString()) : {};
      expect({
        exitCode: run.exitCode,
        stderr: run.stderr.toString().replace(/\d+ ms/, "N ms"),
        spaceId: output.spaceId,
        inWorker: output.inWorker,
        same: output.vector?.every((v: number, i: number) => Math.abs(v - expected[i]) < 1e-6),
      }).toEqual({
        exitCode: 0,
        stderr: "local embedder: model all-MiniLM-L6-v2 ready (384-d, loaded in N ms)\n",
        spaceId: "local:all-MiniLM-L6-v2",
        inWorker: true,
        same: true,
      });
      await embedder.close();
    },
  );
});
