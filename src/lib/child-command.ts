/**
 * How the server starts a child process of its own: this very binary with a hidden command
 * when compiled (a binary runs only its main entry; `mnemo` dispatches it), the child's
 * module from a checkout.
 */
export function childCommand(hiddenCommand: string, modulePath: string): string[] {
  return [process.execPath, Bun.isStandaloneExecutable ? hiddenCommand : modulePath];
}

/** A child's failure as it reports it: the first line of the error's message, at most 500 characters. */
export const childErrorLine = (error: unknown): string => (error as Error).message.split("\n")[0].slice(0, 500);

/**
 * Runs a child module's work as its process's main (a checkout starts the module itself):
 * exits 0 once the work is done, or prints the error's first line on stderr and exits 1.
 */
export async function runAsChildMain(work: () => Promise<void>): Promise<void> {
  try {
    await work();
    process.exit(0);
  } catch (error) {
    process.stderr.write(`${childErrorLine(error)}\n`);
    process.exit(1);
  }
}
