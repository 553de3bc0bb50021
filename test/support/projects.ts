/**
 * What the tests of several projects share: git repositories made under one scratch root, and tmux sessions of
 * windows working in them, each pane recorded by `name@project` with its working directory.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TmuxServer } from "./tmux-server.ts";

/** A plain interactive shell for the panes: no rc file changes what they run. */
export const SHELL = "bash --norc --noprofile -i";

/** Each agent's pane and working directory, by `name@project`. */
export type Panes = Map<string, { pane: string; cwd: string }>;

export function git(args: string[], cwd: string): void {
  const result = Bun.spawnSync(["git", ...args], {
    cwd,
    env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" },
  });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr.toString()}`);
}

/** A new repository `root/name`, with `origin` as its remote when given. */
export function repository(root: string, name: string, origin?: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  git(["init", "-q", dir], root);
  if (origin) git(["remote", "add", "origin", origin], dir);
  return dir;
}

/** A session of windows working in `dir`, as `name@project`, recorded in `panes`. */
export function session(server: TmuxServer, panes: Panes, session: string, project: string, dir: string, names: string[]): void {
  for (const [index, name] of names.entries()) {
    const args =
      index === 0
        ? ["new-session", "-d", "-P", "-F", "#{pane_id}", "-s", session, "-n", name, "-c", dir, SHELL]
        : ["new-window", "-d", "-P", "-F", "#{pane_id}", "-t", `${session}:`, "-n", name, "-c", dir, SHELL];
    panes.set(`${name}@${project}`, { pane: server.run(args).trim(), cwd: dir });
  }
}

/**
 * A pane command whose process gives up its terminal (TIOCNOTTY, 0x5422) and stays: tmux then finds no process
 * group to ask where the pane works and gives no path, as for a window that has not started yet.
 */
export const NO_PATH_COMMAND = ["perl", "-e", '$SIG{HUP} = "IGNORE"; ioctl(STDIN, 0x5422, 0) or die "$!"; sleep 600'];

/** Whether the NO_PATH_COMMAND of pane process `pid` runs and has let go of its terminal (tty_nr, in its stat, is 0). */
export function lostItsTerminal(pid: string | number): boolean {
  if (!existsSync("/usr/bin/perl")) throw new Error("NO_PATH_COMMAND runs perl: apt-get install -y perl");
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.includes("(perl)") && stat.slice(stat.lastIndexOf(")") + 2).split(" ")[4] === "0";
}
