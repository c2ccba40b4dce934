import type { Command, CommanderError } from "commander";

/**
 * A command line commander refuses (a required option or argument missing, an unknown option
 * or command, an argument too many) as one line naming what to fix, worded like our own
 * refusals (`--user: is required (or set MNEMO_USER)`), instead of commander's message followed
 * by the whole help text. `mnemo X --help` still prints the help.
 *
 * @example
 * const usage = oneLineUsageErrors(program);
 * try { await program.parseAsync(argv); } catch (error) { if (error instanceof CommanderError) console.error(usage.messageFor(error)); }
 */
export function oneLineUsageErrors(program: Command) {
  /** The command whose parse failed: commander says which only through its output hooks. */
  let failing: Command = program;
  const watch = (command: Command) => {
    command.configureOutput({
      outputError: () => {
        failing = command;
      },
    });
    // Only the help shown for a command run without its subcommand comes here; a bare `mnemo` still shows it whole.
    if (command !== program) {
      command.configureOutput({
        writeErr: () => {
          failing = command;
        },
      });
    }
    for (const sub of command.commands) watch(sub);
  };
  watch(program);

  const pathOf = (command: Command): string =>
    command.parent ? `${pathOf(command.parent)} ${command.name()}` : command.name();
  const quoted = (message: string) => /'([^']+)'/.exec(message)?.[1] ?? "";
  const suggestion = (message: string) => {
    const match = /\(Did you mean (.+)\?\)/.exec(message);
    return match ? `; did you mean ${match[1]}?` : "";
  };
  const argumentNames = (command: Command) =>
    command.registeredArguments.map((a) =>
      a.variadic ? `${a.name().replace(/s$/, "").toUpperCase()}...` : a.name().toUpperCase(),
    );

  return {
    /** The line to print (without the `mnemo: ` prefix), or null when commander ended normally (help, version). */
    messageFor(error: CommanderError): string | null {
      if (error.exitCode === 0) return null;
      const path = pathOf(failing);
      const message = error.message.replace(/^error: /, "");
      switch (error.code) {
        case "commander.missingMandatoryOptionValue": {
          const flag = quoted(message).split(/[ ,]/)[0];
          const env = failing.options.find((o) => o.long === flag)?.envVar;
          return `${flag}: is required${env ? ` (or set ${env})` : ""}`;
        }
        case "commander.missingArgument": {
          const name = quoted(message);
          const argument = failing.registeredArguments.find((a) => a.name() === name);
          return `${argument?.variadic ? `${name.replace(/s$/, "").toUpperCase()}...` : name.toUpperCase()}: is required`;
        }
        case "commander.optionMissingArgument":
          return `${quoted(message).split(/[ ,]/)[0]}: needs a value`;
        case "commander.unknownOption":
          return `${quoted(message)}: is not an option of ${path}${suggestion(message)} (see ${path} --help)`;
        case "commander.excessArguments": {
          const names = argumentNames(failing);
          return `too many arguments: ${path} takes ${names.length ? names.join(" ") : "none"} (see ${path} --help)`;
        }
        case "commander.unknownCommand":
          return `'${quoted(message)}' is not a command of ${path}${suggestion(message)} (see ${path} --help)`;
        case "commander.help":
          return failing === program
            ? null
            : `${path.replace(/^\S+ /, "")}: needs a command: ${failing.commands.map((c) => c.name()).join(", ")} (see ${path} --help)`;
        default:
          return message.split("\n")[0];
      }
    },
  };
}
