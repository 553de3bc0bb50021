/**
 * Stand-ins for agent CLIs, for the mailman's tests: a node script that behaves as an agent TUI does. It reads the
 * terminal in raw mode and edits its own input line (so a typed reminder shows after its prompt and Enter submits
 * it), shows a prompt (`> ` unless `--prompt TEXT`), and answers each submitted line with `got: <line>`: a reminder
 * that landed shows as `got: agentmail: …`. Its other options:
 *
 * - `--title NAME` sets its process title, as Claude Code from npm does (`claude`);
 * - `--alt` draws on the alternate screen, as full-screen TUIs do;
 * - `--swallow` ignores the first Enter, `--deaf` every Enter (a reminder that is typed but never submitted);
 * - a submitted line `!program args…` runs that program in the foreground, in the agent's own process group with
 *   the terminal as its input (as an agent running a tool interactively would), and shows the prompt again after;
 * - `--inbox` plays Claude Code's cross-session inbox: a registry entry in $CLAUDE_CONFIG_DIR/sessions/<pid>.json
 *   naming its pane and a socket in $CLAUDE_CONFIG_DIR/socks/; each frame is appended to
 *   $CLAUDE_CONFIG_DIR/frames.jsonl and its first line shown as `inbox: <line>` (never on the input line);
 *   `--hold` answers each frame that asks for receipts with a `held` receipt, as a bypass-permissions session does;
 *   `--hold-first` too, and lets go of the frame's connection only once that receipt is out, so the receipt comes
 *   before the sender's send returns (a session may answer that fast; `--hold` leaves the order to chance).
 *
 * Installed as `claude`, `codex`, `gemini` and `tool` in a `bin/` directory: run through its `#!/usr/bin/env node`
 * line it is `node …/codex`, as Codex from npm and Gemini CLI are; `tool` is a node program that is no agent CLI.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TmuxServer } from "./tmux-server.ts";
import { waitFor } from "./workflow.ts";

const FAKE_AGENT = `#!/usr/bin/env node
const { spawn } = require("node:child_process");
const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
if (option("--title")) process.title = option("--title");
const prompt = option("--prompt") ?? "> ";
let enterToIgnore = args.includes("--deaf") ? Infinity : args.includes("--swallow") ? 1 : 0;
if (args.includes("--alt")) process.stdout.write("\\x1b[?1049h\\x1b[H\\x1b[2J");
let line = "";
if (args.includes("--inbox")) {
  const net = require("node:net");
  const fs = require("node:fs");
  const path = require("node:path");
  const dir = process.env.CLAUDE_CONFIG_DIR;
  const socks = path.join(dir, "socks");
  fs.mkdirSync(socks, { recursive: true, mode: 0o700 });
  fs.mkdirSync(path.join(dir, "sessions"), { recursive: true });
  const socket = path.join(socks, process.pid + ".sock");
  const stat = fs.readFileSync("/proc/self/stat", "utf8");
  const procStart = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  const entry = { pid: process.pid, procStart, tmux: "agents:@1." + process.env.TMUX_PANE, messagingSocketPath: socket, status: "idle", version: "stand-in", kind: "interactive" };
  fs.writeFileSync(path.join(dir, "sessions", process.pid + ".json"), JSON.stringify(entry));
  const holdFirst = args.includes("--hold-first");
  net.createServer({ allowHalfOpen: holdFirst }, (connection) => {
    let buffer = "";
    let answered = Promise.resolve();
    connection.on("end", () => answered.then(() => connection.end()));
    connection.on("data", (data) => {
      buffer += data;
      const end = buffer.indexOf("\\n");
      if (end < 0) return;
      const frame = JSON.parse(buffer.slice(0, end));
      buffer = "";
      fs.appendFileSync(path.join(dir, "frames.jsonl"), JSON.stringify(frame) + "\\n");
      process.stdout.write("\\r\\ninbox: " + frame.message.content.split("\\n")[0] + "\\r\\n" + prompt + line);
      if ((args.includes("--hold") || holdFirst) && frame.from) {
        const back = net.createConnection(frame.from.slice("uds:".length));
        back.on("error", () => {});
        if (holdFirst) answered = new Promise((done) => back.on("close", done));
        back.on("connect", () => back.end(JSON.stringify({ type: "control", action: "peer_message_status", status: "held", orig_msg_id: frame.msg_id }) + "\\n"));
      }
    });
    connection.on("error", () => {});
  }).listen(socket);
}
const listen = () => {
  process.stdin.setRawMode(true);
  process.stdin.resume();
  process.stdout.write(prompt);
};
function submit(text) {
  if (!text.startsWith("!")) {
    process.stdout.write("got: " + text + "\\r\\n" + prompt);
    return;
  }
  const [program, ...rest] = text.slice(1).trim().split(/\\s+/);
  process.stdin.setRawMode(false);
  process.stdin.pause();
  spawn(program, rest, { stdio: "inherit" }).on("exit", listen).on("error", listen);
}
process.stdin.setEncoding("utf8");
process.stdin.on("data", (data) => {
  for (const key of data) {
    if (key === "\\r" || key === "\\n") {
      if (enterToIgnore > 0) {
        enterToIgnore--;
        continue;
      }
      process.stdout.write("\\r\\n");
      const text = line;
      line = "";
      submit(text);
    } else if (key === "\\x03" || key === "\\x04") {
      process.stdout.write("\\r\\n");
      process.exit(0);
    } else if (key === "\\x15") {
      line = "";
      process.stdout.write("\\r\\x1b[K" + prompt);
    } else if (key === "\\x7f") {
      if (line.length > 0) process.stdout.write("\\b \\b");
      line = line.slice(0, -1);
    } else if (key >= " ") {
      line += key;
      process.stdout.write(key);
    }
  }
});
listen();
`;

/** The names the stand-in is installed under. */
export const FAKE_PROGRAMS = ["claude", "codex", "gemini", "tool"] as const;

/** Writes the stand-ins into `<dir>/bin` and returns that directory. Needs node on PATH (said plainly if not). */
export function installFakeAgents(dir: string): string {
  if (Bun.which("node") === null) throw new Error("the stand-in agent CLIs run under node: install Node.js (apt-get install nodejs)");
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  for (const name of FAKE_PROGRAMS) {
    writeFileSync(join(bin, name), FAKE_AGENT);
    chmodSync(join(bin, name), 0o755);
  }
  return bin;
}

/**
 * The shell command line that starts a stand-in Claude Code: node, titled `claude` as Claude Code from npm titles
 * itself. Options are single-quoted for the shell (none of ours holds a quote).
 */
export const fakeClaude = (bin: string, ...options: string[]): string =>
  ["node", join(bin, "claude"), "--title", "claude", ...options.map((option) => `'${option}'`)].join(" ");

/**
 * Types `command` (a stand-in's command line) into the shell of `name`'s pane once the shell shows its prompt, and
 * waits until the stand-in shows its own (`prompt`, `> ` by default) at the cursor.
 */
export async function startFakeAgent(server: TmuxServer, name: string, command: string, prompt = "> "): Promise<void> {
  const pane = server.agent(name).paneId;
  await waitFor(`a shell prompt in ${name}`, () => /[$#] *$/.test(server.capture(name).trimEnd()));
  server.run(["send-keys", "-t", pane, "-l", command]);
  server.run(["send-keys", "-t", pane, "Enter"]);
  const atPrompt = () => {
    const [x, y] = server.run(["display-message", "-p", "-t", pane, "#{cursor_x} #{cursor_y}"]).trim().split(" ").map(Number);
    // capture-pane drops a row's trailing blanks: pad it back out to the cursor.
    const row = (server.run(["capture-pane", "-p", "-t", pane]).split("\n")[y!] ?? "").padEnd(x!);
    return (
      row.slice(0, x).endsWith(prompt) && server.run(["display-message", "-p", "-t", pane, "#{pane_current_command}"]).trim() !== "bash"
    );
  };
  await waitFor(() => `the stand-in agent in ${name} to show its prompt:\n${server.capture(name)}`, atPrompt);
}
