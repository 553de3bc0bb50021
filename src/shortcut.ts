/**
 * The command lines agents and their hooks run on every turn, run straight by their command: `receive`,
 * `receive --hook`, `receive --json` and `send <name> <message>` with plain words. Loading the command tree and its
 * strict parser costs such a call more than the rest of its start-up when AGENTMAIL_NAME spares it the tmux call
 * (actions/identity.ts); every other command line goes through the command tree, which means the same.
 */
/** A command's run, as citty calls it (see cli/run.ts): the parsed args, the raw argv and the command. */
interface Runnable {
  run?(context: { rawArgs: string[]; args: never; cmd: never }): unknown;
}

interface Shortcut {
  load(): Promise<{ default: Runnable }>;
  args: Record<string, unknown>;
  json: boolean;
}

/** A word that is a value as it stands: no flag, no `--`, nothing the parser would read otherwise. */
const plain = (value: string | undefined): value is string => value !== undefined && value !== "" && !value.startsWith("-");

export function shortcutFor(argv: readonly string[]): Shortcut | null {
  const [command, first, second, ...rest] = argv;
  if (command === "receive" && second === undefined) {
    const receive = (args: Record<string, unknown>) => ({
      load: () => import("./commands/receive.ts"),
      args: { _: [], ...args },
      json: args.json === true,
    });
    if (first === undefined) return receive({});
    if (first === "--hook") return receive({ hook: true });
    if (first === "--json") return receive({ json: true });
  }
  if (command === "send" && rest.length === 0 && plain(first) && plain(second)) {
    return { load: () => import("./commands/send.ts"), args: { _: [first, second], to: first, body: second }, json: false };
  }
  return null;
}

export async function runShortcut(shortcut: Shortcut, argv: readonly string[]): Promise<number> {
  try {
    const command = (await shortcut.load()).default;
    const result = await command.run!({ rawArgs: argv.slice(1), args: shortcut.args as never, cmd: command as never });
    return typeof result === "number" ? result : 0;
  } catch (thrown) {
    const { reportFailure } = await import("./cli/errors.ts");
    return reportFailure(thrown, shortcut.json);
  }
}
