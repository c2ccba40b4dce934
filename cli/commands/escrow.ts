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
  const { openEscrowStore } = await import("../../src/record-store");
  return openEscrowStore(dataOption, (message) => new CliError(message));
}

/** Runs `work` with the escrow service open, closing the store however it ends. */
async function withEscrow<T>(
  dataOption: string | undefined,
  work: (opened: Awaited<ReturnType<typeof openEscrow>>) => Promise<T>,
): Promise<T> {
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
    throw new CliError(
      `${option}: cannot read '${path}' (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  // A text key (64 hex or base64), or the 32 raw bytes.
  const key = decodeKey(bytes.toString("utf8")) ?? (bytes.length === KEY_BYTES ? bytes : null);
  if (!key)
    throw new CliError(`${option}: '${path}' must hold a 32-byte key as 64 hex characters, base64, or 32 raw bytes`);
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
    .description(
      "escrow a user's client key (from a file, or a newly generated one); a different key already escrowed needs --force",
    )
    .requiredOption("--user <id>", "user id")
    .option("--key-file <file>", "file holding the 32-byte client key (64 hex, base64, or raw bytes)")
    .option("--generate", "generate a random client key")
    .option("--force", "replace a different escrowed key (what was sealed with it no longer opens through escrow)")
    .option("--data <dir>", "data directory")
    .option("--json", "machine-readable output")
    .addHelpText(
      "after",
      `
A user who already has a different escrowed key keeps it unless --force is given: documents,
chat messages and notebook registries sealed with that key would no longer open through escrow
(X-Proxy-Decrypt without X-Client-Key, the sync webhook's wrapped_key). The refusal counts them.

Exit codes: 0 escrowed (or the same key was already there), 1 error or refused.
${examples("mnemo escrow set --user alice --key-file alice.key", "mnemo escrow set --user bob --generate", "mnemo escrow set --user alice --key-file new.key --force")}`,
    )
    .action(async (options: Common & { user: string; keyFile?: string; generate?: boolean; force?: boolean }) => {
      requireUser(options.user);
      if (!!options.keyFile === !!options.generate)
        throw new CliError("give exactly one of --key-file <file> or --generate");
      const key = options.keyFile
        ? await readKeyFile(options.keyFile, "--key-file")
        : (await import("../../src/crypto/client-key")).generateClientKey();
      const [{ EscrowReplaceRefused }, { describeUsage }] = await Promise.all([
        import("../../src/crypto/escrow"),
        import("../../src/crypto/key-usage"),
      ]);
      await withEscrow(options.data, async ({ record, escrow, keyUsage }) => {
        let outcome: Awaited<ReturnType<typeof escrow.set>>;
        let replacedUsage = null;
        try {
          outcome = await escrow.set(options.user, key);
        } catch (error) {
          if (!(error instanceof EscrowReplaceRefused)) throw new CliError((error as Error).message);
          const old = error.opens ? await escrow.get(options.user) : null;
          replacedUsage = old ? await keyUsage.countSealedWith(record.store.db, options.user, old) : null;
          const what = replacedUsage
            ? `${describeUsage(replacedUsage)} hold values sealed with it, which escrow could no longer open`
            : "it does not open under the master key, so what it sealed cannot be counted";
          if (!options.force)
            throw new CliError(
              `user '${options.user}' already has a different escrowed client key: ${what}; keep that key to read them, or pass --force to replace it`,
            );
          outcome = await escrow.set(options.user, key, { replace: true });
        }
        const status = await escrow.status(options.user);
        if (options.json)
          return printJson({
            userId: options.user,
            escrowed: true,
            outcome,
            generated: !!options.generate,
            replacedKeyUsage: replacedUsage,
            ...status,
          });
        const lines = {
          escrowed: `escrowed a ${options.generate ? "generated " : ""}client key for ${options.user}`,
          unchanged: `this client key is already escrowed for ${options.user}; nothing changed`,
          replaced: `replaced the escrowed client key of ${options.user}${replacedUsage ? ` (${describeUsage(replacedUsage)} sealed with the old key no longer open through escrow)` : ""}`,
        };
        process.stdout.write(`${lines[outcome]}\n`);
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
        if (status.present)
          opens = await escrow.get(options.user).then(
            () => true,
            () => false,
          );
        if (options.json) return printJson({ userId: options.user, ...status, opens });
        process.stdout.write(
          status.present
            ? `escrowed (since ${status.createdAt}, updated ${status.updatedAt}; ${opens ? "opens" : "DOES NOT OPEN"} under the master key)\n`
            : "no escrowed key\n",
        );
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
    .addHelpText(
      "after",
      `
With the key in <data>/master.key, a server running on the data dir picks up the new key by
itself (it re-reads the file when the stored keys stop opening under its own). With
SERVER_MASTER_KEY, a running server cannot learn the new key: the command refuses while any
server runs on the store (a live index-writer lease); stop them, rotate, then start them with
SERVER_MASTER_KEY set to the new key.

Exit codes: 0 rotated, 1 error or refused (nothing changed).
${examples("openssl rand -hex 32 > new-master.key", "mnemo escrow rotate-master --new-key-file new-master.key")}`,
    )
    .action(async (options: Common & { newKeyFile: string }) => {
      const newKey = await readKeyFile(options.newKeyFile, "--new-key-file");
      const { renameSync, writeFileSync } = await import("node:fs");
      await withEscrow(options.data, async ({ record, master, escrow }) => {
        if (master.source === "env") {
          // Any running server holds the index writer lease within seconds (the TTL is not used to read it).
          const { createLease } = await import("../../src/db/leases");
          const holder = await createLease(record.store, "indexer", 0).currentHolder();
          if (holder) {
            throw new CliError(
              `a server is running on this store (index writer ${holder}): it read SERVER_MASTER_KEY at start and cannot learn a new one, ` +
                "so escrow would stop working there until a restart. Stop every server, run this again, then start them with SERVER_MASTER_KEY set to the new key",
            );
          }
        }
        // The embedded key file is replaced only after the commit; the new key is staged first,
        // so a crash in between leaves it on disk beside the old one.
        const { STAGED_KEY_SUFFIX } = await import("../../src/crypto/master-key");
        const staged = master.source === "file" ? `${master.path}${STAGED_KEY_SUFFIX}` : null;
        if (staged) writeFileSync(staged, `${newKey.toString("hex")}\n`, { mode: 0o600 });
        let rotated: number;
        try {
          ({ rotated } = await escrow.rotateMaster(newKey));
        } catch (error) {
          throw new CliError((error as Error).message);
        }
        if (staged) renameSync(staged, master.path!);
        const next = staged
          ? `${master.path} now holds the new key`
          : "set SERVER_MASTER_KEY to the new key on every replica and restart them";
        if (options.json) return printJson({ rotated, keyFile: staged ? master.path : null });
        process.stdout.write(`re-sealed ${rotated} escrowed key(s); ${next}\n`);
      });
    });
}
