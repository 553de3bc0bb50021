/**
 * Claude Code's cross-session inbox, as agentmail uses it (verified on 2.1.332; test/agents/protocol.test.ts fails
 * when a pinned Claude Code stops answering like this).
 *
 * - Registry: an interactive session writes `$CLAUDE_CONFIG_DIR/sessions/<pid>.json` (config dir `~/.claude` by
 *   default), rewritten on every status change, with `tmux` ("<session>:@<window>.%<pane>"), `status` (idle, busy,
 *   waiting), `procStart` (field 22 of /proc/<pid>/stat, which tells a reused pid) and `messagingSocketPath`. A
 *   session without that field (an older version, CLAUDE_CODE_HARBOR_KITE=0, the feature turned off) has no inbox.
 * - Frame: one connection per message, one JSON line, then the connection ends; the session answers nothing.
 *   Priority `next`: idle, it starts a turn; busy, the model reads it after the running tool's result. Never `now`,
 *   which interrupts (it dismissed an open permission prompt).
 * - Receipts: only when the frame's `from` names a socket in the recipient socket's directory that the sending
 *   process itself listens on (Claude checks the listener's pid): `held`, `dropped`, `expired` (`status_detail`
 *   `refused` when refused), later `delivered` or `denied`. Nothing when it is accepted.
 * - Its inbox guard drops a body identical to one from the same sender within 30 s: every frame names its message
 *   ids, so no two frames are alike.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { createConnection, createServer, type Server } from "node:net";
import { dirname, join } from "node:path";
import { descendsFrom } from "./proc.ts";

export interface ClaudeSession {
  pid: number;
  /** "<session>:@<window>.%<pane>" */
  tmux?: string;
  messagingSocketPath?: string;
  procStart?: string;
  status?: string;
  version?: string;
}

/** /proc/<pid>/stat field 22, the start time in clock ticks; null when the process is gone. */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** The pane id a registry entry names: the `.%<n>` its `tmux` field ends with (a session name may hold `:`). */
export const paneOfSession = (session: ClaudeSession): string | null => session.tmux?.match(/\.(%\d+)$/)?.[1] ?? null;

/**
 * The live session of the agent CLI holding a pane's terminal, from the registry in `configDir`: the entry whose
 * process is `pid` (the pane's foreground process) or runs under it, that runs and started when the entry says (else
 * the file is stale, left by a session that was killed), and whose `tmux` field, when it names a pane, names this
 * one. Never by pane id alone: pane ids restart at %0 on every tmux server, and all of a user's sessions, on every
 * server, share one registry. A file that does not parse is passed over.
 */
export function sessionOfProcess(configDir: string, pid: number, paneId: string): ClaudeSession | null {
  const dir = join(configDir, "sessions");
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return null;
  }
  for (const name of names) {
    if (!/^\d+\.json$/.test(name)) continue;
    let entry: ClaudeSession;
    try {
      entry = JSON.parse(readFileSync(join(dir, name), "utf8"));
    } catch {
      continue;
    }
    if (typeof entry?.pid !== "number" || !descendsFrom(entry.pid, pid)) continue;
    const pane = paneOfSession(entry);
    if (pane !== null && pane !== paneId) continue;
    const started = processStart(entry.pid);
    if (started === null || (entry.procStart !== undefined && entry.procStart !== started)) continue;
    return entry;
  }
  return null;
}

/** Whether a registry entry still describes the same live process (a cached channel is checked with this). */
export const sessionAlive = (pid: number, procStart: string | undefined): boolean => {
  const started = processStart(pid);
  return started !== null && (procStart === undefined || procStart === started);
};

/** The frame: a user message with priority `next`; `from` asks for receipts, `msgId` (a UUID) comes back in them. */
export function frameLine(text: string, options: { from?: string; msgId?: string } = {}): string {
  return `${JSON.stringify({
    type: "user",
    message: { role: "user", content: text },
    priority: "next",
    ...(options.from ? { from: `uds:${options.from}` } : {}),
    ...(options.msgId ? { msg_id: options.msgId } : {}),
  })}\n`;
}

/** Writes one frame and ends the connection; resolves once the session has the bytes. */
export function sendFrame(socketPath: string, line: string, timeoutMs = 3_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer from ${socketPath} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on("connect", () => socket.end(line));
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on("close", (failed) => {
      clearTimeout(timer);
      if (!failed) resolve();
    });
  });
}

/** A receipt as Claude Code sends it (the fields agentmail reads). */
export interface Receipt {
  status?: string;
  status_detail?: string;
  drop_reason?: string;
  reason?: string;
  orig_msg_id?: string;
  dropped_msg_ids?: string[];
}

/**
 * A socket this process listens on for receipts, beside the recipients' sockets (`<dir>/<pid>.sock`, the name Claude
 * itself uses): one per directory, for the life of the process that sends the frames (the mailman).
 */
export class ReceiptListener {
  private constructor(
    readonly path: string,
    private readonly server: Server,
  ) {}

  static async open(recipientSocket: string, onReceipt: (receipt: Receipt) => void): Promise<ReceiptListener> {
    const path = join(dirname(recipientSocket), `${process.pid}.sock`);
    rmSync(path, { force: true });
    const server = createServer((connection) => {
      let buffer = "";
      connection.setEncoding("utf8");
      connection.on("data", (chunk: string) => {
        buffer += chunk;
        for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          try {
            const receipt = JSON.parse(line);
            if (receipt?.type === "control") onReceipt(receipt as Receipt);
          } catch {
            // Not a receipt: nothing agentmail can act on.
          }
        }
      });
      connection.on("error", () => {});
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => resolve());
    });
    server.unref();
    return new ReceiptListener(path, server);
  }

  close(): void {
    this.server.close();
    rmSync(this.path, { force: true });
  }
}
