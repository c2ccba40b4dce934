/**
 * `mnemo models pull [NAME]`, `mnemo models install [NAME] --from DIR` and `mnemo models
 * list`: fetch the local embedding model ahead of time (or copy it from a directory on a
 * machine without network), and see what is on disk. Runnable on its own too
 * (`bun cli/commands/models.ts models list`), which is how its tests run it.
 */
import chalk from "chalk";
import { Command, CommanderError } from "commander";
import {
  DEFAULT_HUB_URL,
  DEFAULT_LOCAL_MODEL,
  getModelSpec,
  installModelFromDir,
  listModels,
  pullModel,
} from "../../src/search";
import { CliError, examples, printJson, printTable } from "../output.ts";

interface ModelsOptions {
  data?: string;
  hub?: string;
  json?: boolean;
  force?: boolean;
  from?: string;
}

/**
 * The configuration's readers, imported when a command runs: src/config.ts brings TypeBox,
 * which `mnemo --help` and the commands that read no configuration need not load.
 */
const config = () => import("../../src/config.ts");

/**
 * The models dir the server would use: `MNEMO_MODELS_DIR`, else `<data>/models` with the
 * data dir from `--data`, `MNEMO_DATA_DIR` or `~/.mnemo` (as src/config.ts decides).
 */
export async function resolveModelsDir(dataDir?: string): Promise<string> {
  const { modelsDirFor, resolveDataDir } = await config();
  return modelsDirFor(resolveDataDir(dataDir));
}

/** `12.3 MB`, `850 kB`, `0 B`. */
function formatBytes(bytes: number): string {
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${Math.round(bytes / 1e3)} kB`;
  return `${bytes} B`;
}

/**
 * A byte progress bar redrawn in place with `\r` on a terminal; silent otherwise, so that
 * logs and pipes get only the final line.
 */
function byteProgressBar(enabled: boolean) {
  let lastDraw = 0;
  let drawn = false;
  return {
    update(received: number, total: number | undefined, file: string) {
      const now = Date.now();
      if (!enabled || (now - lastDraw < 100 && received !== total)) return;
      lastDraw = now;
      drawn = true;
      const width = 28;
      const fraction = total ? Math.min(1, received / total) : 0;
      const filled = Math.round(fraction * width);
      const bar = total ? chalk.cyan("█".repeat(filled)) + chalk.dim("░".repeat(width - filled)) : chalk.dim("…");
      const amount = total ? `${formatBytes(received)} / ${formatBytes(total)}` : formatBytes(received);
      // \x1b[K clears what a longer previous line left behind.
      process.stderr.write(`\r${bar} ${amount}  ${file}\x1b[K`);
    },
    finish() {
      if (drawn) process.stderr.write("\r\x1b[K");
    },
  };
}

async function pullAction(name: string | undefined, options: ModelsOptions): Promise<void> {
  const model = name ?? DEFAULT_LOCAL_MODEL;
  try {
    getModelSpec(model);
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  const { modelHubUrl, modelPinsEnabled } = await config();
  const modelsDir = await resolveModelsDir(options.data);
  const hubUrl = options.hub ?? modelHubUrl() ?? DEFAULT_HUB_URL;
  const bar = byteProgressBar(!options.json && Boolean(process.stderr.isTTY));
  let result: Awaited<ReturnType<typeof pullModel>>;
  try {
    result = await pullModel({
      modelsDir,
      model,
      hubUrl,
      force: options.force,
      pins: modelPinsEnabled(),
      onProgress: bar.update,
    });
  } catch (error) {
    throw new CliError(`could not pull ${model} from ${hubUrl}: ${(error as Error).message}`);
  } finally {
    bar.finish();
  }
  if (options.json) return printJson(result);
  const verb = result.downloaded ? "pulled" : "already present:";
  process.stdout.write(`${chalk.green("✓")} ${verb} ${model} (${formatBytes(result.sizeBytes)}) in ${result.path}\n`);
}

async function installAction(name: string | undefined, options: ModelsOptions): Promise<void> {
  const model = name ?? DEFAULT_LOCAL_MODEL;
  try {
    getModelSpec(model);
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  const { modelPinsEnabled } = await config();
  const modelsDir = await resolveModelsDir(options.data);
  let result: Awaited<ReturnType<typeof installModelFromDir>>;
  try {
    result = await installModelFromDir({ modelsDir, model, from: options.from!, pins: modelPinsEnabled() });
  } catch (error) {
    throw new CliError(`could not install ${model} from ${options.from}: ${(error as Error).message}`);
  }
  if (options.json) return printJson(result);
  process.stdout.write(
    `${chalk.green("✓")} installed ${model} (${formatBytes(result.sizeBytes)}, verified) in ${result.path}\n`,
  );
}

async function listAction(options: ModelsOptions): Promise<void> {
  const { modelPinsEnabled } = await config();
  const modelsDir = await resolveModelsDir(options.data);
  const models = await listModels(modelsDir, { pins: modelPinsEnabled() });
  if (options.json) return printJson({ modelsDir, models });
  printTable(
    models.map((model) => ({
      name: model.name,
      state: model.state,
      size: model.sizeBytes > 0 ? formatBytes(model.sizeBytes) : "-",
      dimension: String(model.dimension),
      path: model.path,
    })),
    ["name", "state", "size", "dimension", "path"],
  );
  for (const model of models) {
    if (model.state === "incomplete" || model.state === "corrupt") {
      process.stderr.write(
        chalk.yellow(`${model.name}: ${model.problem}; run \`mnemo models pull ${model.name} --force\`\n`),
      );
    }
  }
}

/**
 * Adds `models pull` and `models list` to the program.
 *
 * @example
 * const program = new Command("mnemo");
 * registerModelsCommand(program);
 * await program.parseAsync(["models", "list", "--json"], { from: "user" });
 */
export function registerModelsCommand(program: Command): void {
  const models = program
    .command("models")
    .description("local embedding models: download ahead, install from a directory, list what is present")
    .addHelpText(
      "after",
      examples(
        `mnemo models pull ${DEFAULT_LOCAL_MODEL}`,
        `mnemo models install ${DEFAULT_LOCAL_MODEL} --from DIR`,
        "mnemo models list",
      ),
    );
  models
    .command("pull [name]")
    .description(`download a model from the hub and verify its checksums (default ${DEFAULT_LOCAL_MODEL})`)
    .option("--data <dir>", "data directory (models go to <data>/models unless MNEMO_MODELS_DIR is set)")
    .option("--hub <url>", "base URL of the model hub (default MNEMO_MODEL_HUB or https://huggingface.co)")
    .option("--force", "download again even when valid files are present")
    .option("--json", "machine-readable output")
    .addHelpText(
      "after",
      examples(`mnemo models pull ${DEFAULT_LOCAL_MODEL}`, "mnemo models pull bge-small-en-v1.5 --data ~/.mnemo"),
    )
    .action(pullAction);
  models
    .command("install [name]")
    .description(
      `copy a model's files from a directory (no network), verified against the pinned checksums (default ${DEFAULT_LOCAL_MODEL})`,
    )
    .requiredOption(
      "--from <dir>",
      "directory with the model's files in the hub's layout (tokenizer.json, onnx/model_quantized.onnx, …)",
    )
    .option("--data <dir>", "data directory (models go to <data>/models unless MNEMO_MODELS_DIR is set)")
    .option("--json", "machine-readable output")
    .addHelpText(
      "after",
      examples(`mnemo models install ${DEFAULT_LOCAL_MODEL} --from /media/usb/${DEFAULT_LOCAL_MODEL}`),
    )
    .action(installAction);
  models
    .command("list")
    .description("list known models, whether they are present, their size and dimension")
    .option("--data <dir>", "data directory (models are in <data>/models unless MNEMO_MODELS_DIR is set)")
    .option("--json", "machine-readable output")
    .addHelpText("after", examples("mnemo models list --data ~/.mnemo"))
    .action(listAction);
}

if (import.meta.main) {
  const program = new Command("mnemo").exitOverride();
  registerModelsCommand(program);
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) process.exit(error.exitCode);
    if (!(error instanceof CliError)) throw error;
    process.stderr.write(`${chalk.red(`mnemo: ${error.message}`)}\n`);
    process.exit(error.exitCode);
  }
}
