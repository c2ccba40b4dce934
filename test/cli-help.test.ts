import { describe, expect, test } from "bun:test";
import type { Command } from "commander";
import { buildProgram } from "../cli/mnemo";

/** Every command of the program, the root first, each with its full name (`escrow rotate-master`). */
function allCommands(command: Command, path: string[] = []): Array<{ name: string; command: Command }> {
  const name = ["mnemo", ...path].join(" ");
  return [{ name, command }, ...command.commands.flatMap((sub) => allCommands(sub, [...path, sub.name()]))];
}

/** What `--help` prints, text added after the options included. */
function helpOf(command: Command): string {
  let out = "";
  command.configureOutput({
    writeOut: (text) => {
      out += text;
    },
  });
  command.outputHelp();
  return out;
}

/** The closing example block: its lines, or null when the help does not end with one. */
function closingExample(help: string): string[] | null {
  const lines = help.trimEnd().split("\n");
  const heading = lines.findLastIndex((line) => /^Examples?:$/.test(line));
  if (heading < 0) return null;
  const block = lines.slice(heading + 1);
  return block.length > 0 && block.every((line) => /^ {2}\S/.test(line)) ? block : null;
}

describe("mnemo --help", () => {
  const commands = allCommands(buildProgram());

  test("walks every command and subcommand", () => {
    expect(commands.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        "mnemo",
        "mnemo serve",
        "mnemo keys create",
        "mnemo mcp",
        "mnemo reindex",
        "mnemo escrow rotate-master",
      ]),
    );
    expect(commands.length).toBeGreaterThan(20);
  });

  test.each(allCommands(buildProgram()).map((c) => [c.name, c.command] as const))(
    "%s --help ends with an example of the command",
    (name, command) => {
      const example = closingExample(helpOf(command));
      expect({ name, endsWithExample: example !== null }).toEqual({ name, endsWithExample: true });
      expect(example!.some((line) => line.startsWith(`  ${name}`))).toBe(true);
    },
  );
});
