import type { Command } from "commander";
import { CliError, examples, printJson } from "../output";

interface Common {
  data?: string;
  json?: boolean;
}

/**
 * Opens the store of record and the escrow service under the configured master key
 * (SERVER_MASTER_KEY, else `<data>/master.key` on the embedded store). Imported lazily so
 * `--help` stays fast.
 */
async function openEscrow(dataOption: string | undefined) {
  const [{ loadConfig, resolveDataDir }, { openRecordStore }, { checkMasterKeyConfig, resolveMasterKey }, { createEscrowService }] = await Promise.all([
    import("../../src/config"),
    import("../../src/record-store"),
    import("../../src/crypto/master-key"),
    import("../../src/crypto/escrow"),
  ]);
  const config = loadConfig({ dataDir: resolveDataDir(dataOption) });
  const keyOptions = { configured: config.encryption.masterKey, dataDir: config.dataDir, postgres: !!config.storage.databaseUrl };
  // The key's configuration is checked before the store opens; the key file is made only after.
  checkMasterKeyConfig(keyOptions);
  const record = await openRecordStore(config.dataDir);
  try {
    const master = resolveMasterKey(keyOptions);
    return { record, master, escrow: await createEscrowService(record.store, master.key) };
  } catch (error) {
    await record.close();
    throw new CliError((error as Error).message);
  }
}

/** Runs `work` with the escrow service open, closing the store however it ends. */
async function withEscrow<T>(dataOption: string | undefined, work: (opened: Awaited<ReturnType<typeof openEscrow>>) => Promise<T>): Promise<T> {
  const opened = await openEscrow(dataOption);
  try {
    return await work(opened);
  } finally {
    await opened.record.close();
  }
}

async function readKeyFile(path: string, option: string): Promise<Buffer> {
  const { readFileSync } = await import("node:fs");
  const { decodeKey, KEY_BYTES } = await import("../../src/crypto/client-key");
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new CliError(`${option}: cannot read '${path}' (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  // A text key (64 hex or base64), or the 32 raw bytes.
  const key = decodeKey(bytes.toString("utf8")) ?? (bytes.length === KEY_BYTES ? bytes : null);
  if (!key) throw new CliError(`${option}: '${path}' must hold a 32-byte key as 64 hex characters, base64, or 32 raw bytes`);
  return key;
}

const requireUser = (user: string) => {
  if (!user.trim()) throw new CliError("--user: must not be empty");
};

/** `mnemo escrow …`: client keys escrowed under the server master key. Keys are never printed. */
export function registerEscrowCommand(program: Command): void {
  const escrow = program
    .command("escrow")
    .description("manage escrowed client keys (sealed under the server master key)")
    .addHelpText("after", examples("mnemo escrow set --user alice --generate", "mnemo escrow status --user alice"));

  escrow
    .command("set")
    .description("escrow a user's client key (from a file, or a newly generated one)")
    .requiredOption("--user <id>", "user id")
    .option("--key-file <file>", "file holding the 32-byte client key (64 hex, base64, or raw bytes)")
    .option("--generate", "generate a random client key")
    .option("--data <dir>", "data directory")
    .option("--json", "machine-readable output")
    .addHelpText("after", examples("mnemo escrow set --user alice --key-file alice.key", "mnemo escrow set --user bob --generate"))
    .action(async (options: Common & { user: string; keyFile?: string; generate?: boolean }) => {
      requireUser(options.user);
      if (!!options.keyFile === !!options.generate) throw new CliError("give exactly one of --key-file <file> or --generate");
      const key = options.keyFile
        ? await readKeyFile(options.keyFile, "--key-file")
        : (await import("../../src/crypto/client-key")).generateClientKey();
      await withEscrow(options.data, async ({ escrow }) => {
        await escrow.set(options.user, key);
        const status = await escrow.status(options.user);
        if (options.json) return printJson({ userId: options.user, escrowed: true, generated: !!options.generate, ...status });
        process.stdout.write(`escrowed a ${options.generate ? "generated " : ""}client key for ${options.user}\n`);
      });
    });

  escrow
    .command("status")
    .description("whether a user has an escrowed client key")
    .requiredOption("--user <id>", "user id")
    .option("--data <dir>", "data directory")
    .option("--json", "machine-readable output")
    .addHelpText("after", examples("mnemo escrow status --user alice"))
    .action(async (options: Common & { user: string }) => {
      requireUser(options.user);
      await withEscrow(options.data, async ({ escrow }) => {
        const status = await escrow.status(options.user);
        let opens = false;
        if (status.present) opens = await escrow.get(options.user).then(() => true, () => false);
        if (options.json) return printJson({ userId: options.user, ...status, opens });
        process.stdout.write(status.present ? `escrowed (since ${status.createdAt}, updated ${status.updatedAt}; ${opens ? "opens" : "DOES NOT OPEN"} under the master key)\n` : "no escrowed key\n");
      });
    });

  escrow
    .command("remove")
    .description("remove a user's escrowed client key")
    .requiredOption("--user <id>", "user id")
    .option("--data <dir>", "data directory")
    .option("--json", "machine-readable output")
    .addHelpText("after", examples("mnemo escrow remove --user alice"))
    .action(async (options: Common & { user: string }) => {
      requireUser(options.user);
      await withEscrow(options.data, async ({ escrow }) => {
        const removed = await escrow.remove(options.user);
        if (options.json) return printJson({ userId: options.user, removed });
        if (!removed) throw new CliError(`no escrowed key for user '${options.user}'`);
        process.stdout.write(`removed the escrowed key of ${options.user}\n`);
      });
    });

  escrow
    .command("rotate-master")
    .description("re-seal every escrowed key under a new master key, in one transaction")
    .requiredOption("--new-key-file <file>", "file holding the new 32-byte master key (64 hex, base64, or raw bytes)")
    .option("--data <dir>", "data directory")
    .option("--json", "machine-readable output")
    .addHelpText("after", examples("openssl rand -hex 32 > new-master.key", "mnemo escrow rotate-master --new-key-file new-master.key"))
    .action(async (options: Common & { newKeyFile: string }) => {
      const newKey = await readKeyFile(options.newKeyFile, "--new-key-file");
      const { renameSync, writeFileSync } = await import("node:fs");
      await withEscrow(options.data, async ({ master, escrow }) => {
        // The embedded key file is replaced only after the commit; the new key is staged first,
        // so a crash in between leaves it on disk beside the old one.
        const staged = master.source === "file" ? `${master.path}.new` : null;
        if (staged) writeFileSync(staged, newKey.toString("hex") + "\n", { mode: 0o600 });
        let rotated: number;
        try {
          ({ rotated } = await escrow.rotateMaster(newKey));
        } catch (error) {
          throw new CliError((error as Error).message);
        }
        if (staged) renameSync(staged, master.path!);
        const next = staged ? `${master.path} now holds the new key` : "set SERVER_MASTER_KEY to the new key on every replica and restart them";
        if (options.json) return printJson({ rotated, keyFile: staged ? master.path : null });
        process.stdout.write(`re-sealed ${rotated} escrowed key(s); ${next}\n`);
      });
    });
}
