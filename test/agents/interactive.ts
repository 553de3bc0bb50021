/**
 * A world for a real agent CLI run interactively, as a user runs it: the CLI is the first process of its tmux pane
 * (respawned in place of the pane's shell, with a clean environment: only what `World.env` gives it), against the
 * world's mock model, with agentmail's hooks installed in the user's settings and the mailman running. Nothing is
 * ever typed into an agent's pane here, except the first prompt of a Gemini CLI (the user's; Gemini has no other way
 * in), which `typePrompt` types and says so.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../support/wait.ts";
import { printedPid } from "../support/workflow.ts";
import { AGENT, SENDER, World } from "./world.ts";

const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/** waitFor, every 100 ms; a timeout says what it waited for, and `detail` (the screen, say) at that moment. */
export function until<T>(what: string, check: () => T | Promise<T>, timeoutMs = 60_000, detail = () => ""): Promise<NonNullable<T>> {
  return waitFor(() => `${what}${detail() ? `\n${detail()}` : ""}`, check, timeoutMs, 100);
}

/** Whether `pid` runs (a zombie does not count). */
function running(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
}

/** One copy of a sent message as `sent --json` lists it. */
interface SentRecord {
  id: string;
  to: string;
  read_flag: boolean;
  delivery?: { state: string; event?: string; channel?: string; reason?: string };
}

export class Interactive {
  readonly world: World;
  private mailmanPid: number | null = null;
  private readonly codexHomes: string[] = [];

  /** `windows`: more windows besides the agent's and the sender's (each a bash until launched); `binary`: see World. */
  constructor(windows: string[] = [], binary?: string) {
    this.world = new World(binary);
    for (const name of windows) this.world.tmux.addWindow(name, this.world.repo.dir);
  }

  pane(window: string): string {
    return this.world.tmux.agent(window).paneId;
  }

  /** Runs `argv` as the first process of `window`'s pane, with `World.env` plus `extra` and nothing else. */
  launch(window: string, argv: string[], extra: Record<string, string>, cwd = this.world.repo.dir): void {
    const env = Object.entries(this.world.env(window, extra)).map(([key, value]) => quote(`${key}=${value}`));
    const command = `exec env -i ${env.join(" ")} ${argv.map(quote).join(" ")}`;
    this.world.tmux.run(["respawn-pane", "-k", "-t", this.pane(window), "-c", cwd, command]);
  }

  screen(window: string): string {
    return this.world.tmux.run(["capture-pane", "-p", "-t", this.pane(window)]);
  }

  /** The user types the first prompt of a Gemini CLI (it drops an Enter that follows text closely: retried). */
  async typePrompt(window: string, text: string): Promise<void> {
    const pane = this.pane(window);
    this.world.tmux.run(["send-keys", "-t", pane, "-l", text]);
    await Bun.sleep(300);
    for (let attempt = 0; attempt < 5; attempt++) {
      this.world.tmux.run(["send-keys", "-t", pane, "Enter"]);
      const gone = await until("the prompt submitted", () => !this.inputBox(window).includes(text), 2_000).catch(() => false);
      if (gone) return;
    }
    throw new Error(`the typed prompt was never submitted: ${text}\n${this.screen(window)}`);
  }

  /**
   * The lines of a TUI's input box: between its last two horizontal rules (Claude Code draws one above and one below
   * it), or the few lines after the only one (Gemini CLI).
   */
  inputBox(window: string): string {
    const lines = this.screen(window).split("\n");
    const rules = lines.flatMap((line, index) => (/^[─━]{20,}/.test(line.trim()) ? [index] : []));
    if (rules.length >= 2 && rules.at(-1)! - rules.at(-2)! <= 6) return lines.slice(rules.at(-2)! + 1, rules.at(-1)).join("\n");
    const start = rules.at(-1) ?? 0;
    return lines.slice(start + 1, start + 6).join("\n");
  }

  async startMailman(args: string[] = []): Promise<void> {
    const started = await this.world.agentmail(["mailman", "--daemon", "--sweep", "0.5", ...args], SENDER);
    if (started.code !== 0) throw new Error(`the mailman did not start: ${started.stderr}`);
    this.mailmanPid = printedPid(started.stdout);
  }

  /** The first request to the mock model since `after` that carries `text`. */
  requestCarrying(text: string, after = 0) {
    return this.world.mock.conversation.find((request) => request.at >= after && carries(request.body, text));
  }

  /** What `sent --json` from the sender says of one copy of a message. */
  async sent(id: string, to: string): Promise<SentRecord | undefined> {
    return (JSON.parse((await this.world.agentmail(["sent", "--json"], SENDER)).stdout) as SentRecord[]).find(
      (record) => record.id === id && record.to === to,
    );
  }

  /** What `mailman status --json` says, as the sender runs it. */
  async mailmanStatus(): Promise<{ running: boolean; started_by: { how: string; agent?: string; pane?: string } | null }> {
    return JSON.parse((await this.world.agentmail(["mailman", "status", "--json"], SENDER)).stdout);
  }

  mailmanLog(): string {
    const path = join(this.world.repo.mailDir, ".mailman", "log");
    return existsSync(path) ? readFileSync(path, "utf8") : "";
  }

  /** Stops what the Codex CLI started outside the tmux server, when the world stops. */
  ownsCodexHome(home: string): void {
    this.codexHomes.push(home);
  }

  async stop(): Promise<void> {
    await this.world.agentmail(["mailman", "stop"], SENDER).catch(() => null);
    if (this.mailmanPid !== null && running(this.mailmanPid)) process.kill(this.mailmanPid, "SIGKILL");
    this.world.tmux.run(["kill-server"]);
    for (const home of this.codexHomes) await stopCodexDaemons(home);
    // The CLIs killed by the hang-up still write under HOME for a moment.
    await Bun.sleep(500);
    this.world.stop();
  }
}

/**
 * Codex CLI's app-server daemon and its updater outlive the TUI and the tmux server (own process group). They are
 * stopped by the pids they record in $CODEX_HOME/app-server-daemon/*.pid, and by their binary, which the daemon
 * copies under $CODEX_HOME/packages: only this world's processes match. Twice: the updater may start a moment late.
 */
export async function stopCodexDaemons(codexHome: string): Promise<void> {
  for (let round = 0; round < 2; round++) {
    const pids = new Set<number>();
    for (const name of ["daemon.pid", "daemon-updater.pid"]) {
      try {
        const pid = JSON.parse(readFileSync(join(codexHome, "app-server-daemon", name), "utf8")).pid;
        if (typeof pid === "number" && running(pid)) pids.add(pid);
      } catch {
        // Not started, or gone.
      }
    }
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readlinkSync(`/proc/${entry}/exe`).startsWith(`${join(codexHome, "packages")}/`)) pids.add(Number(entry));
      } catch {
        // Another user's, or gone.
      }
    }
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGTERM");
      } catch {
        // Gone meanwhile.
      }
    }
    const deadline = Date.now() + 8_000;
    while ([...pids].some(running) && Date.now() < deadline) await Bun.sleep(100);
    for (const pid of [...pids].filter(running)) process.kill(pid, "SIGKILL");
    if (pids.size === 0) return;
    await Bun.sleep(1_000);
  }
}

/** Whether the JSON text of a request body holds `text` (compared as JSON escapes it). */
export function carries(body: unknown, text: string): boolean {
  return JSON.stringify(body).includes(JSON.stringify(text).slice(1, -1));
}

export { AGENT, SENDER };
