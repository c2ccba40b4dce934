import chalk from "chalk";

/** Thrown by commands for expected failures: printed to stderr, exit code 1 (or `exitCode`). */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + "\n");
}

export function printTable(rows: Array<Record<string, string>>, columns: string[]): void {
  if (rows.length === 0) return;
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i])).join("  ").trimEnd();
  process.stdout.write(chalk.bold(line(columns.map((c) => c.toUpperCase()))) + "\n");
  for (const row of rows) process.stdout.write(line(columns.map((c) => row[c] ?? "")) + "\n");
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
        process.stderr.write(`\r${label} ${chalk.cyan("█".repeat(filled))}${"░".repeat(width - filled)} ${done}/${total}`);
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
