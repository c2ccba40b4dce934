import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeHub, startFakeHub } from "./helpers/fake-hub.ts";
import { getModelSpec } from "../src/search/index.ts";
import { tinyModelFiles, writeTinyModel } from "./helpers/tiny-model.ts";

const COMMAND = join(import.meta.dir, "..", "cli", "commands", "models.ts");

let dataDir: string;
let hub: FakeHub;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "mnemo-models-cli-"));
  hub = startFakeHub();
  hub.setRepo("Xenova/all-MiniLM-L6-v2", tinyModelFiles());
});

afterAll(async () => {
  await hub.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * Runs `models …` as its own process, with no inherited MNEMO_* settings. The tiny model
 * stands in for all-MiniLM-L6-v2, so the pinned hashes are off unless a test turns them on.
 */
async function mnemoModels(...args: string[]) {
  return mnemoModelsWith({ MNEMO_MODEL_PINS: "off" }, ...args);
}

async function mnemoModelsWith(env: Record<string, string>, ...args: string[]) {
  const child = Bun.spawn([process.execPath, COMMAND, "models", ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: dataDir, NO_COLOR: "1", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { stdout, stderr, exitCode };
}

const modelsDir = () => join(dataDir, "models");
const sizeOf = (files: Record<string, Uint8Array>, ...paths: string[]) =>
  paths.reduce((sum, path) => sum + files[path].byteLength, 0);

test("pull downloads the model and list shows it present, in JSON", async () => {
  const pull = await mnemoModels("pull", "all-MiniLM-L6-v2", "--data", dataDir, "--hub", hub.url, "--json");
  const list = await mnemoModels("list", "--data", dataDir, "--json");
  const files = tinyModelFiles();
  const modelSize = sizeOf(files, "tokenizer.json", "config.json", "onnx/model_quantized.onnx");
  const pulled = JSON.parse(pull.stdout);
  expect({
    pull: { ...pull, stdout: { ...pulled, files: pulled.files.map((f: { path: string }) => f.path) } },
    list: { ...list, stdout: JSON.parse(list.stdout) },
  }).toEqual({
    pull: {
      exitCode: 0,
      stderr: "",
      stdout: {
        model: "all-MiniLM-L6-v2",
        path: join(modelsDir(), "all-MiniLM-L6-v2"),
        downloaded: true,
        sizeBytes: modelSize,
        files: ["tokenizer.json", "config.json", "onnx/model_quantized.onnx"],
      },
    },
    list: {
      exitCode: 0,
      stderr: "",
      stdout: {
        modelsDir: modelsDir(),
        models: [
          {
            name: "all-MiniLM-L6-v2",
            state: "present",
            path: join(modelsDir(), "all-MiniLM-L6-v2"),
            sizeBytes: modelSize,
            dimension: 384,
            verified: true,
          },
          {
            name: "bge-small-en-v1.5",
            state: "absent",
            path: join(modelsDir(), "bge-small-en-v1.5"),
            sizeBytes: 0,
            dimension: 384,
            verified: false,
            problem: `not found in ${join(modelsDir(), "bge-small-en-v1.5")}`,
          },
        ],
      },
    },
  });
});

test("pull prints one success line; a second pull finds the model present; list prints a table", async () => {
  const dir = mkdtempSync(join(dataDir, "plain-"));
  const first = await mnemoModels("pull", "--data", dir, "--hub", hub.url);
  const second = await mnemoModels("pull", "--data", dir, "--hub", hub.url);
  const list = await mnemoModels("list", "--data", dir);
  const size = (sizeOf(tinyModelFiles(), "tokenizer.json", "config.json", "onnx/model_quantized.onnx") / 1000).toFixed(
    0,
  );
  const path = join(dir, "models", "all-MiniLM-L6-v2");
  expect({ first, second, listLines: list.stdout.split("\n").map((line) => line.split(/\s{2,}/)) }).toEqual({
    first: { exitCode: 0, stderr: "", stdout: `✓ pulled all-MiniLM-L6-v2 (${size} kB) in ${path}\n` },
    second: { exitCode: 0, stderr: "", stdout: `✓ already present: all-MiniLM-L6-v2 (${size} kB) in ${path}\n` },
    listLines: [
      ["NAME", "STATE", "SIZE", "DIMENSION", "PATH"],
      ["all-MiniLM-L6-v2", "present", `${size} kB`, "384", path],
      ["bge-small-en-v1.5", "absent", "-", "384", join(dir, "models", "bge-small-en-v1.5")],
      [""],
    ],
  });
});

test("pull of an unknown model or from a hub without it fails with a message on stderr", async () => {
  const unknown = await mnemoModels("pull", "no-such-model", "--data", dataDir, "--hub", hub.url);
  const missing = await mnemoModels("pull", "bge-small-en-v1.5", "--data", dataDir, "--hub", hub.url);
  expect({ unknown, missing }).toEqual({
    unknown: {
      exitCode: 1,
      stdout: "",
      stderr: 'mnemo: unknown local model "no-such-model" (known: all-MiniLM-L6-v2, bge-small-en-v1.5)\n',
    },
    missing: {
      exitCode: 1,
      stdout: "",
      stderr: `mnemo: could not pull bge-small-en-v1.5 from ${hub.url}: ${hub.url}/Xenova/bge-small-en-v1.5/resolve/main/tokenizer.json: HTTP 404\n`,
    },
  });
});

test("pinned hashes: the default model's published graph is pinned; other files are refused by pull, list and install", async () => {
  const dir = mkdtempSync(join(dataDir, "pinned-"));
  const pull = await mnemoModelsWith({}, "pull", "--data", dir, "--hub", hub.url);
  writeTinyModel(join(dir, "models", "all-MiniLM-L6-v2"));
  const list = await mnemoModelsWith({}, "list", "--data", dir, "--json");
  const tinySize = tinyModelFiles()["onnx/model_quantized.onnx"].byteLength;
  expect({
    pins: {
      sha256: getModelSpec("all-MiniLM-L6-v2").pinnedSha256,
      bytes: getModelSpec("all-MiniLM-L6-v2").pinnedBytes,
    },
    pull,
    listed: JSON.parse(list.stdout).models[0].problem,
  }).toEqual({
    pins: {
      sha256: { "onnx/model_quantized.onnx": "afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1" },
      bytes: { "onnx/model_quantized.onnx": 22_972_370 },
    },
    pull: {
      exitCode: 1,
      stdout: "",
      stderr: `mnemo: could not pull all-MiniLM-L6-v2 from ${hub.url}: size mismatch for onnx/model_quantized.onnx: pinned 22972370 bytes, got ${tinySize}\n`,
    },
    listed: `onnx/model_quantized.onnx has ${tinySize} bytes, pinned 22972370`,
  });
});

test("install --from copies a model dir without network, verified; a file that differs from its pin is refused with one line", async () => {
  const source = writeTinyModel(mkdtempSync(join(dataDir, "usb-")));
  const dir = mkdtempSync(join(dataDir, "offline-"));
  const refused = await mnemoModelsWith({}, "install", "--from", source, "--data", dir);
  // Of the pinned size but other bytes: refused by its hash.
  const forged = writeTinyModel(mkdtempSync(join(dataDir, "forged-")), {
    ...tinyModelFiles(),
    "onnx/model_quantized.onnx": new Uint8Array(22_972_370),
  });
  const forgedRun = await mnemoModelsWith({}, "install", "--from", forged, "--data", dir);
  const listAfterRefusals = JSON.parse((await mnemoModels("list", "--data", dir, "--json")).stdout).models[0].state;
  const installed = await mnemoModels("install", "all-MiniLM-L6-v2", "--from", source, "--data", dir);
  const missing = await mnemoModels("install", "bge-small-en-v1.5", "--from", join(dataDir, "nowhere"), "--data", dir);
  const list = JSON.parse((await mnemoModels("list", "--data", dir, "--json")).stdout).models[0];
  const size = (sizeOf(tinyModelFiles(), "tokenizer.json", "config.json", "onnx/model_quantized.onnx") / 1000).toFixed(
    0,
  );
  const path = join(dir, "models", "all-MiniLM-L6-v2");
  expect({
    refused,
    forgedRun: { ...forgedRun, stderr: forgedRun.stderr.replace(/got [0-9a-f]{64}/, "got <sha>") },
    listAfterRefusals,
    installed,
    missing,
    list: { state: list.state, verified: list.verified },
  }).toEqual({
    refused: {
      exitCode: 1,
      stdout: "",
      stderr: `mnemo: could not install all-MiniLM-L6-v2 from ${source}: size mismatch for onnx/model_quantized.onnx: pinned 22972370 bytes, got ${tinyModelFiles()["onnx/model_quantized.onnx"].byteLength}\n`,
    },
    forgedRun: {
      exitCode: 1,
      stdout: "",
      stderr: `mnemo: could not install all-MiniLM-L6-v2 from ${forged}: checksum mismatch for onnx/model_quantized.onnx: pinned sha256 afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1, got <sha>\n`,
    },
    listAfterRefusals: "absent",
    installed: { exitCode: 0, stderr: "", stdout: `✓ installed all-MiniLM-L6-v2 (${size} kB, verified) in ${path}\n` },
    missing: {
      exitCode: 1,
      stdout: "",
      stderr: `mnemo: could not install bge-small-en-v1.5 from ${join(dataDir, "nowhere")}: ${join(dataDir, "nowhere")} lacks tokenizer.json, onnx/model_quantized.onnx\n`,
    },
    list: { state: "present", verified: true },
  });
});
