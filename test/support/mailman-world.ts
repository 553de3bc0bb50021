/**
 * What the mailman's end-to-end files share: a repository with stand-in agent CLIs in `bin/`, a private tmux server
 * with these windows, and a mailman daemon on demand, stopped with the server and the repository after the file (or
 * describe) it is called in. Registers its hooks where it is called; the parts are there once they have run.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { installFakeAgents } from "./fake-agent.ts";
import { tempRepo } from "./repo.ts";
import { TmuxServer } from "./tmux-server.ts";
import { am, occurrences, paneText, printedPid, stopMailman, waitFor } from "./workflow.ts";

export interface MailmanWorld {
  repo: ReturnType<typeof tempRepo>;
  server: TmuxServer;
  /** The directory of the stand-in agent CLIs. */
  bin: string;
  /** The environment and cwd of an agent's window. */
  as(name: string): { env: Record<string, string>; cwd: string };
  /** The text of an agent's pane. */
  text(name: string): string;
  /** Reminders the stand-in agent CLI of the pane took (it answers each line it is given with `got: <line>`). */
  reminders(name: string): number;
  /** The mailman's log (<repo>/.git/mail/.mailman/log). */
  log(): string;
  /** Starts `mailman --daemon --typing <args>` from the first window; its pid is stopped after. */
  startMailman(args: string[]): Promise<void>;
  /** Waits until the agent's pane shows at least `count` reminders; fails with the screen and log if it never does. */
  waitReminders(name: string, count: number): Promise<number>;
}

/** `taken`: how a reminder the stand-in agent CLI took shows in its pane. */
export function mailmanWorld(names: string[], taken: RegExp): MailmanWorld {
  const pids = new Set<number>();
  const world = {
    bin: "",
    as: (name: string) => ({ env: world.server.agent(name).env, cwd: world.repo.dir }),
    text: (name: string) => paneText(world.server, name),
    reminders: (name: string) => occurrences(world.text(name), taken),
    log: () => readFileSync(join(world.repo.mailDir, ".mailman", "log"), "utf8"),
    async startMailman(args: string[]): Promise<void> {
      const started = await am(["mailman", "--daemon", "--typing", ...args], world.as(names[0]!));
      const pid = printedPid(started.stdout);
      if (pid) pids.add(pid);
      expect({ code: started.code, stderr: started.stderr }).toEqual({ code: 0, stderr: "" });
    },
    async waitReminders(name: string, count: number): Promise<number> {
      await waitFor(
        () =>
          `${count} reminders in the pane of ${JSON.stringify(name)}, which shows ${world.reminders(name)}:\n${world.text(name)}\nlog:\n${world.log()}`,
        () => world.reminders(name) >= count,
      );
      return world.reminders(name);
    },
  } as MailmanWorld;
  beforeAll(() => {
    world.repo = tempRepo();
    world.bin = installFakeAgents(world.repo.dir);
    world.server = TmuxServer.start(names, world.repo.dir);
  });
  afterAll(async () => {
    if (world.server) await stopMailman(world.as(names[0]!), pids);
    world.server?.stop();
    world.repo?.remove();
  });
  return world;
}
