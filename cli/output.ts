import chalk from "chalk";

/** Thrown by commands for expected failures: printed to stderr, exit code 1 (or `exitCode`). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Errors of our own that name what the operator can fix (src/config, src/db): one line each. */
const ONE_LINE_ERRORS = new Set([
  "ConfigError",
  "StoreOpenError",
  "StoreFullError",
  "SchemaTooNewError",
  "ImportFormatError",
]);

/** What a system call failed to do, in words (`mkdir` → create). */
const ACTIONS: Record<string, string> = {
  mkdir: "create",
  open: "open",
  write: "write",
  read: "read",
  rename: "rename",
  unlink: "remove",
  rmdir: "remove",
  rm: "remove",
  scandir: "read",
  readdir: "read",
  stat: "read",
  lstat: "read",
  access: "access",
  copyfile: "copy",
  chmod: "change the mode of",
  listen: "listen on",
};
const REASONS: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOENT: "no such file or directory",
  EEXIST: "it already exists",
  ENOTDIR: "a part of the path is a file, not a directory",
  EISDIR: "it is a directory",
  EROFS: "the file system is read-only",
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  ENAMETOOLONG: "the name is too long",
  ELOOP: "too many symbolic links",
  EMFILE: "too many open files",
  EADDRINUSE: "the address is in use",
  EADDRNOTAVAIL: "the address is not one of this machine's",
};

/**
 * The one line to print for an expected failure (our refusals, a bad configuration, a
 * store that cannot be opened, a path or port the system refused), or null for a bug,
 * which is printed with its stack.
 */
export function expectedFailureMessage(error: unknown): string | null {
  if (error instanceof CliError) return error.message;
  if (!(error instanceof Error)) return null;
  // Raised by the PostgreSQL driver, whose message names only the address.
  if (error.name === "StoreUnavailableError")
    return `the PostgreSQL store of record (MNEMO_DATABASE_URL) cannot be reached: ${error.message}`;
  if (ONE_LINE_ERRORS.has(error.name) || ONE_LINE_ERRORS.has(error.constructor?.name)) return error.message;
  return systemFailureMessage(error);
}

/**
 * A failed system call in words, `cannot create /x/y: permission denied`, naming `subject`
 * instead of the call's own path when given; null when it is not one the operator can fix.
 */
export function systemFailureMessage(error: unknown, subject?: string): string | null {
  const { code, syscall, path, message } = error as NodeJS.ErrnoException;
  const reason = code ? REASONS[code] : undefined;
  if (!reason) return null;
  const action = ACTIONS[syscall ?? ""] ?? syscall ?? "use";
  if (code === "EADDRINUSE" || code === "EADDRNOTAVAIL")
    return `cannot ${action} the configured address: ${reason} (${message}); choose another with --host/--port`;
  return `cannot ${action} ${subject ?? path ?? "a file"}: ${reason}`;
}

/**
 * The closing lines of a command's `--help`: every command ends with a runnable example.
 *
 * @example
 * command.addHelpText("after", examples("mnemo keys list --user alice"));
 */
export function examples(...lines: string[]): string {
  return `\nExample${lines.length > 1 ? "s" : ""}:\n${lines.map((line) => `  ${line}`).join("\n")}`;
}

/** `1 memory`, `7 memories`. */
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printTable(rows: Array<Record<string, string>>, columns: string[]): void {
  if (rows.length === 0) return;
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  process.stdout.write(`${chalk.bold(line(columns.map((c) => c.toUpperCase())))}\n`);
  for (const row of rows) process.stdout.write(`${line(columns.map((c) => row[c] ?? ""))}\n`);
}

/**
 * A progress bar on stderr. On a terminal it redraws in place; otherwise it prints a
 * line at every 10% so logs stay readable.
 */
export function progressBar(label: string) {
  const tty = Boolean(process.stderr.isTTY);
  let lastDecile = -1;
  return {
    update(done: number, total: number) {
      const fraction = total > 0 ? Math.min(1, done / total) : 1;
      if (tty) {
        const width = 30;
        const filled = Math.round(fraction * width);
        process.stderr.write(
          `\r${label} ${chalk.cyan("█".repeat(filled))}${"░".repeat(width - filled)} ${done}/${total}`,
        );
      } else {
        const decile = Math.floor(fraction * 10);
        if (decile !== lastDecile) {
          lastDecile = decile;
          process.stderr.write(`${label} ${Math.round(fraction * 100)}% (${done}/${total})\n`);
        }
      }
    },
    finish() {
      if (tty) process.stderr.write("\n");
    },
  };
}
