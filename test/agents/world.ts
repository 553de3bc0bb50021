/**
 * One throwaway world for a real agent CLI: a git repository, an isolated HOME, a private tmux server with the
 * agent's window and a sender's window, and a mock model server. The agent runs headless with its pane's TMUX and
 * TMUX_PANE, so its hooks and the MCP server it starts speak for the agent's window, as they would in the pane.
 *
 * `agentmail` on the agent's PATH is the compiled binary behind a shim that appends each call (`args<TAB>exit`) to a
 * log once it returns: the order of the hooks' status changes is read from there, while the store itself (mailboxes,
 * `agentmail status`) is read with the real binary.
 */
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { am, readText, storedMessages, type Result, type StoredMessage } from "../support/e2e.ts";
import { MockModel } from "../support/mock-model/server.ts";
import { BINARY, removeDir, tempRepo } from "../support/repo.ts";
import { TmuxServer } from "../support/tmux-server.ts";

export const AGENT = "agent";
export const SENDER = "sender";

export interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  seconds: number;
}

/** One call of agentmail the agent made: its arguments as one string, and its exit code. */
export interface Call {
  args: string;
  exit: number;
}

/** How long one headless run may take before it counts as hung (runs take 1–5 s here). */
const RUN_TIMEOUT_MS = 120_000;

export class World {
  readonly repo = tempRepo("agentmail-agents-repo-");
  readonly home = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-agents-home-")));
  readonly mock = new MockModel();
  readonly tmux: TmuxServer;
  private readonly callLog: string;
  private readonly shimDir: string;

  /** `binary`: the agentmail the agent's hooks and `agentmail` run (dist/agentmail; a benchmark's "before" passes another). */
  constructor(readonly binary: string = BINARY) {
    this.tmux = TmuxServer.start([AGENT, SENDER], this.repo.dir);
    this.shimDir = join(this.home, ".local", "bin");
    this.callLog = join(this.home, "agentmail-calls.log");
    mkdirSync(this.shimDir, { recursive: true });
    mkdirSync(join(this.home, "tmp"), { recursive: true });
    const shim = join(this.shimDir, "agentmail");
    const quoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
    writeFileSync(
      shim,
      `#!/bin/sh\n${quoted(binary)} "$@"\ncode=$?\nprintf '%s\\t%s\\n' "$*" "$code" >> ${quoted(this.callLog)}\nexit $code\n`,
    );
    chmodSync(shim, 0o755);
  }

  /**
   * The environment of a process in `window`'s pane, for a user whose HOME is the isolated one: nothing else of
   * this machine's environment (no API keys, no CI flags, no agent settings) reaches the agent.
   */
  env(window: string = AGENT, extra: Record<string, string> = {}): Record<string, string> {
    const pane = this.tmux.agent(window).env;
    return {
      PATH: `${this.shimDir}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      HOME: this.home,
      USER: process.env.USER ?? "agent",
      LANG: "C.UTF-8",
      TERM: "xterm-256color",
      // The agent CLIs keep files and sockets under TMPDIR (Claude Code's claude-<uid>/, cc-socks/): inside the
      // isolated home, they go with it.
      TMPDIR: join(this.home, "tmp"),
      XDG_CONFIG_HOME: join(this.home, ".config"),
      XDG_CACHE_HOME: join(this.home, ".cache"),
      XDG_DATA_HOME: join(this.home, ".local", "share"),
      XDG_STATE_HOME: join(this.home, ".local", "state"),
      TMUX: pane.TMUX!,
      TMUX_PANE: pane.TMUX_PANE!,
      ...extra,
    };
  }

  /** Runs the compiled agentmail as the user would in `window`'s pane (not through the shim: not logged). */
  agentmail(args: string[], window: string = AGENT, extra: Record<string, string> = {}): Promise<Result> {
    return am(args, { env: this.env(window, extra), cwd: this.repo.dir, binary: this.binary });
  }

  /** Sends mail from `from` to `to` and returns its id; throws if the send did not succeed. */
  async send(from: string, to: string, body: string): Promise<string> {
    const result = await this.agentmail(["send", to, body], from);
    if (result.code !== 0) throw new Error(`send failed (${result.code}): ${result.stderr}`);
    return result.stdout.trim();
  }

  /** The agent's status as `agentmail status --json` shows it. */
  async status(window: string = AGENT): Promise<string | null> {
    const result = await this.agentmail(["status", "--json"], window);
    if (result.code !== 0) throw new Error(`status failed (${result.code}): ${result.stderr}`);
    return (JSON.parse(result.stdout) as { status: string | null }).status;
  }

  /** Every message in `window`'s mailbox, read or not. */
  mailbox(window: string): StoredMessage[] {
    return storedMessages(join(this.repo.mailDir, `${window}.jsonl`));
  }

  /** The calls of agentmail the agent (its hooks, its MCP server) made so far, in the order they ended. */
  calls(): Call[] {
    return readText(this.callLog)
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => {
        const tab = line.lastIndexOf("\t");
        return { args: line.slice(0, tab), exit: Number(line.slice(tab + 1)) };
      });
  }

  /** Writes a file under HOME (agent settings that point the CLI at the mock). */
  writeHomeFile(path: string, text: string): string {
    const full = join(this.home, path);
    mkdirSync(join(full, ".."), { recursive: true });
    writeFileSync(full, text);
    return full;
  }

  /** Runs `command` headless in the repository with the agent pane's environment; a hang is killed and reported. */
  async run(command: string[], extraEnv: Record<string, string>): Promise<AgentRun> {
    const started = performance.now();
    const child = Bun.spawn(command, {
      cwd: this.repo.dir,
      env: this.env(AGENT, extraEnv),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    let timedOut = false;
    const guard = setTimeout(() => {
      timedOut = true;
      child.kill(9);
    }, RUN_TIMEOUT_MS);
    try {
      const [stdout, stderr, code] = await Promise.all([
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
        child.exited,
      ]);
      return { code, stdout, stderr, timedOut, seconds: (performance.now() - started) / 1000 };
    } finally {
      clearTimeout(guard);
    }
  }

  stop(): void {
    this.mock.stop();
    this.tmux.stop();
    this.repo.remove();
    removeDir(this.home);
  }
}
