/**
 * How the server starts a child process of its own: this very binary with a hidden command
 * when compiled (a binary runs only its main entry; `mnemo` dispatches it), the child's
 * module from a checkout.
 */
export function childCommand(hiddenCommand: string, modulePath: string): string[] {
  return [process.execPath, Bun.isStandaloneExecutable ? hiddenCommand : modulePath];
}
