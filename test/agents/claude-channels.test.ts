/**
 * Claude Code, interactive in a private tmux server against the mock model, with agentmail's hooks installed
 * (`hooks install claude --user`) and the mailman running (no typing): mail reaches an idle session as a new turn
 * and a busy one after its running tool's result, through the session's own inbox socket, and nothing is typed into
 * its pane; a bypass-permissions session holds the mail and that is reported; a shell pane is never typed into.
 * One session of each kind serves every test (a session costs seconds to start). The "protocol" tests check what
 * agentmail relies on in Claude Code itself, apart from agentmail, so a pinned upgrade that changes it fails loudly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { dirname, join } from "node:path";
import { AGENT, carries, Interactive, SENDER, until } from "./interactive.ts";
import { claudeSession, launchClaude, routeByContent, setUpClaude } from "./launch.ts";

setDefaultTimeout(180_000);

const BYPASS = "bypass";
const SHELL = "shell";
let lab: Interactive;

/** The newest user message of an Anthropic request, as JSON text. */
const lastUser = (body: { messages?: { role: string; content: unknown }[] }) =>
  JSON.stringify((body?.messages ?? []).filter((message) => message.role === "user").at(-1)?.content ?? "");

beforeAll(async () => {
  lab = new Interactive([BYPASS, SHELL]);
  lab.world.mock.otherwise(routeByContent);
  await setUpClaude(lab);
  await launchClaude(lab, AGENT);
  await launchClaude(lab, BYPASS, ["--permission-mode", "bypassPermissions"]);
  await lab.startMailman();
});

afterAll(async () => {
  await lab?.stop();
});

/** One frame written straight to a session's socket, as the protocol says; `from`: a socket this process listens on. */
function writeFrame(socket: string, content: string, from?: string, msgId?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const frame = {
      type: "user",
      message: { role: "user", content },
      priority: "next",
      ...(from ? { from: `uds:${from}`, msg_id: msgId } : {}),
    };
    const connection = createConnection(socket);
    connection.on("connect", () => connection.end(`${JSON.stringify(frame)}\n`));
    connection.on("error", reject);
    connection.on("close", () => resolve());
  });
}

describe("protocol: Claude Code 2.1.332 as agentmail relies on it", () => {
  test("an interactive session registers its pane, pid, start time, status and inbox socket", () => {
    const entry = claudeSession(lab, AGENT)!;
    expect(entry).toMatchObject({ kind: "interactive", status: "idle", version: "2.1.332" });
    expect(String(entry.tmux)).toMatch(new RegExp(`:@\\d+\\.${lab.pane(AGENT)}$`));
    expect(typeof entry.pid).toBe("number");
    const stat = readFileSync(`/proc/${entry.pid}/stat`, "utf8");
    expect(entry.procStart).toBe(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
    expect(String(entry.messagingSocketPath)).toMatch(/\.sock$/);
  });

  test("a frame of priority next on that socket starts a turn whose user message carries its text", async () => {
    const sentAt = Date.now();
    await writeFrame(String(claudeSession(lab, AGENT)!.messagingSocketPath), "Protocol ping (proto-41aa).");
    const request = await until("the model request", () => lab.requestCarrying("proto-41aa", sentAt), 60_000);
    expect(carries(request.body, "Another Claude session sent a message:\nProtocol ping (proto-41aa).")).toBe(true);
    await until("the session idle again", () => claudeSession(lab, AGENT)?.status === "idle", 60_000);
  });

  test("a bypass-permissions session answers a frame that asks for receipts with held, on the sender's own socket", async () => {
    const socket = String(claudeSession(lab, BYPASS)!.messagingSocketPath);
    const path = join(dirname(socket), `${process.pid}.sock`);
    const receipts: Record<string, unknown>[] = [];
    const server = createServer((connection) => {
      let buffer = "";
      connection.on("data", (data) => {
        buffer += data;
        for (const line of buffer.split("\n").slice(0, -1)) receipts.push(JSON.parse(line));
        buffer = buffer.slice(buffer.lastIndexOf("\n") + 1);
      });
    });
    await new Promise<void>((resolve) => server.listen(path, resolve));
    try {
      const msgId = crypto.randomUUID();
      await writeFrame(socket, "Protocol hold (proto-77c3).", path, msgId);
      const receipt = await until("a receipt", () => receipts.find((each) => each.orig_msg_id === msgId), 30_000);
      expect(receipt).toMatchObject({ type: "control", action: "peer_message_status", status: "held" });
    } finally {
      server.close();
      rmSync(path, { force: true });
    }
  });
});

describe("Claude Code's inbox, through the mailman", () => {
  test("an idle session gets a new turn with the message, and nothing was typed into its pane", async () => {
    const before = lab.screen(AGENT);
    const sentAt = Date.now();
    const id = await lab.world.send(SENDER, AGENT, "Idle mail: the staging database is back (idle-7c1e).");
    const request = await until(
      "a model request carrying the mail",
      () => lab.requestCarrying("idle-7c1e", sentAt),
      60_000,
      lab.mailmanLog,
    );
    expect(lastUser(request.body)).toContain(`ID: ${id}`);
    expect(lastUser(request.body)).toContain("agentmail: a message for you");
    expect(lab.mailmanLog()).toContain(`framed 1 message for "${AGENT}" via claude-inbox in ${lab.pane(AGENT)}`);
    expect(lab.mailmanLog()).not.toContain("reminded");
    // Typed text would sit in the input box or show as the turn's prompt: neither happened.
    expect(lab.inputBox(AGENT).replace(/[│❯>\s]/g, "")).toBe("");
    // Claude Code's own words for a frame from its inbox: a new turn of its own.
    expect(lastUser(request.body)).toContain("Another Claude session sent a message:");
    expect(before).not.toContain("idle-7c1e");
    expect((await lab.sent(id, AGENT))?.delivery).toMatchObject({
      state: expect.stringMatching(/^(notified|read)$/),
      channel: "claude-inbox",
    });
    await until("the message marked read once no bad receipt came", async () => (await lab.sent(id, AGENT))?.read_flag, 30_000);
    // One arrival: the end-of-turn hook did not bring it again.
    await until("the session idle again", () => claudeSession(lab, AGENT)?.status === "idle", 60_000);
    expect(lab.world.mock.conversation.filter((each) => carries(each.body, `You got new mail\nFrom: ${SENDER}\nID: ${id}`))).toEqual([]);
  });

  test("a busy session gets it after the running tool's result, and the tool completes", async () => {
    const startedAt = Date.now();
    await lab.world.send(SENDER, AGENT, "Please wait (RUN-SLEEP-6 busy-3f2a).");
    await until(
      "the Bash sleep running",
      () => lab.requestCarrying("busy-3f2a", startedAt)?.reply && claudeSession(lab, AGENT)?.status === "busy",
      60_000,
    );
    const sentAt = Date.now();
    const id = await lab.world.send(SENDER, AGENT, "Busy mail: rebase onto main (busy-9d41).");
    const request = await until(
      "the request carrying the busy mail",
      () => lab.requestCarrying("busy-9d41", sentAt),
      60_000,
      lab.mailmanLog,
    );
    const messages = request.body.messages as { role: string; content: unknown }[];
    const text = JSON.stringify(messages);
    const result = text.lastIndexOf('"tool_result"');
    expect(result).toBeGreaterThan(0);
    expect(text.indexOf("busy-9d41", result)).toBeGreaterThan(result);
    expect(text.slice(result, result + 300)).toContain('"is_error":false');
    expect(text.slice(result, result + 300)).toContain("(Bash completed with no output)");
    // Through the inbox (its words for mail that came during a turn), not through the post-tool hook.
    expect(text.slice(result)).toContain("Another Claude session sent a message while you were working:");
    expect(lab.mailmanLog()).toMatch(new RegExp(`framed 1 message for "${AGENT}" via claude-inbox`));
    expect((await lab.sent(id, AGENT))?.delivery).toMatchObject({
      state: expect.stringMatching(/^(notified|read)$/),
      channel: "claude-inbox",
    });
  });

  test("a bypass-permissions session holds the mail: held, with the setting that changes it; not read, not hooked", async () => {
    const id = await lab.world.send(SENDER, BYPASS, "Held mail (held-51b0).");
    await until("the held receipt recorded", async () => (await lab.sent(id, BYPASS))?.delivery?.event === "held", 60_000, lab.mailmanLog);
    expect((await lab.sent(id, BYPASS))?.delivery?.reason).toContain('"crossSessionInbound": "accept"');
    expect((await lab.sent(id, BYPASS))?.read_flag).toBe(false);
    const status = JSON.parse((await lab.world.agentmail(["mailman", "status", "--json"], SENDER)).stdout);
    expect(status.agents.find((agent: { name: string }) => agent.name === BYPASS)).toMatchObject({ outcome: "held" });
    expect(lab.world.mock.conversation.some((request) => carries(request.body, "held-51b0"))).toBe(false);
  });

  test("a pane running a shell is never typed into: its mail waits, recorded unreachable", async () => {
    const before = lab.screen(SHELL);
    const id = await lab.world.send(SENDER, SHELL, "For a shell (shell-0aa2).");
    await until("the unreachable event", async () => (await lab.sent(id, SHELL))?.delivery?.event === "unreachable", 30_000);
    expect((await lab.sent(id, SHELL))?.delivery?.reason).toContain("runs bash, not an agent CLI");
    expect(lab.screen(SHELL)).toBe(before);
  });
});
