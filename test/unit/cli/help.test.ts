/**
 * Every command's --help, as agents read it, compared with the committed snapshot
 * (test/unit/cli/__snapshots__/help.test.ts.snap). A change to a command's help shows up here for review;
 * accept it with `bun test test/unit/cli/help.test.ts --update-snapshots`.
 */
import { describe, expect, test } from "bun:test";
import type { CommandDef } from "citty";
import { resolveCommand, resolved } from "../../../src/cli/definitions.ts";
import { root } from "../../../src/commands/index.ts";
import { VERSION } from "../../../src/mail/version.ts";
import { runInProcess } from "../../support/in-process.ts";

/** Every command path in the tree, the root first: [], ["send"], …, ["hooks", "install"], … */
async function commandPaths(command: CommandDef<any>, path: string[] = []): Promise<string[][]> {
  const { subCommands } = await resolveCommand(command);
  const paths = [path];
  for (const [name, sub] of Object.entries(subCommands ?? {})) paths.push(...(await commandPaths((await resolved(sub))!, [...path, name])));
  return paths;
}

const paths = await commandPaths(root);

describe("--help of every command", () => {
  test("covers the whole tree", () => {
    expect(paths.map((path) => path.join(" "))).toEqual([
      "",
      "send",
      "receive",
      "reply",
      "inbox",
      "read",
      "thread",
      "sent",
      "ack",
      "search",
      "archive",
      "recipients",
      "name",
      "group",
      "group add",
      "group remove",
      "group list",
      "join",
      "leave",
      "roles",
      "setup",
      "doctor",
      "status",
      "onboard",
      "cleanup",
      "migrate",
      "mailman",
      "mailman stop",
      "mailman status",
      "mcp",
      "hooks",
      "hooks install",
      "hooks uninstall",
      "bridge",
      "bridge add",
      "bridge list",
      "bridge remove",
      "bridge join",
      "bridge leave",
      "bridge sync",
      "bridge run",
      "claim",
      "release",
      "claims",
      "guard",
      "watch",
      "web",
    ]);
  });

  for (const path of paths) {
    test(`agentmail ${path.join(" ")} --help`.replace("  ", " "), async () => {
      const run = await runInProcess([...path, "--help"]);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
      // The version is left out so that a release does not change the snapshot.
      expect(run.stdout.replace(`(v${VERSION})`, "(v<version>)")).toMatchSnapshot();
    });
  }

  test("every option with a default shows it", async () => {
    for (const path of paths) {
      const help = JSON.parse((await runInProcess([...path, "--help", "--json"])).stdout) as { options: { default?: unknown }[] };
      const text = (await runInProcess([...path, "--help"])).stdout;
      for (const option of help.options.filter((each) => each.default !== undefined))
        expect(text).toContain(`(default: ${option.default})`);
    }
  });
});
