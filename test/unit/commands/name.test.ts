/**
 * `agentmail name` and the tmux calls under it (src/tmux/rename.ts), in process against a private tmux server: the
 * name pinned and read back, a name tmux would store otherwise refused with the window's old name (and tmux's own
 * renaming) given back and nothing registered, a window gone, and the warning for a name that looks like another's;
 * the caller's window renamed and pinned, its registration and unread mail moved along, and the names refused.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { AgentmailError } from "../../../src/mail/errors.ts";
import { createMessage } from "../../../src/mail/message.ts";
import { appendMessage } from "../../../src/store/file/mailbox.ts";
import { ensureRoot } from "../../../src/store/paths.ts";
import { NAME_HELD_MS } from "../../../src/identity/presence.ts";
import { HOSTNAME } from "../../../src/store/durable/process-identity.ts";
import { readStatus, writeStatus } from "../../../src/store/file/status.ts";
import { pinWindowName, restoreWindowName } from "../../../src/tmux/rename.ts";
import { runInProcess } from "../../support/in-process.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";

let server: TmuxServer;
let repo: ReturnType<typeof tempRepo>;
/** A window tmux names itself (no -n): automatic-rename on, as a user's unnamed window. */
let auto: { paneId: string; windowId: string; env: Record<string, string> };

const as = (name: string) => ({
  env: { TMUX: server.agent(name).env.TMUX!, TMUX_PANE: server.agent(name).paneId },
  cwd: repo.dir,
});
const run = (name: string, ...argv: string[]) => runInProcess(argv, as(name));
const asAuto = () => ({ env: { TMUX: auto.env.TMUX!, TMUX_PANE: auto.paneId }, cwd: repo.dir });
const windowName = (windowId: string) => server.run(["display-message", "-p", "-t", windowId, "#{window_name}"]).replace(/\n$/, "");
const option = (windowId: string, name: string) => server.run(["show-options", "-w", "-v", "-t", windowId, name]).trim();
const unread = (mailbox: string) => {
  const path = join(repo.mailDir, `${mailbox}.jsonl`);
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { message: string; read_at?: string | null })
    .filter((message) => !message.read_at)
    .map((message) => message.message);
};

beforeAll(() => {
  repo = tempRepo();
  server = TmuxServer.start(["alice", "bob"], repo.dir);
  const { windowId, paneId } = server.addUnnamedWindow(repo.dir);
  auto = { paneId, windowId, env: { ...server.agent("alice").env, TMUX_PANE: paneId } };
});
afterAll(() => {
  server.stop();
  repo.remove();
});
afterEach(() => {
  rmSync(repo.mailDir, { recursive: true, force: true });
  server.run(["rename-window", "-t", auto.windowId, "--", "bash"]);
  server.run(["set-option", "-w", "-t", auto.windowId, "automatic-rename", "on"]);
});

describe("pinning and giving back a window's name", () => {
  test("a pinned name is stored literally, tmux's syntax and a trailing ';' included, and tmux renames it no more", async () => {
    const odd = "#{pane_id} ##[x] #(true) end;";
    expect(await pinWindowName(auto.windowId, odd, auto.env)).toBe(odd);
    expect(windowName(auto.windowId)).toBe(odd);
    expect(option(auto.windowId, "automatic-rename")).toBe("off");
    expect(option(auto.windowId, "allow-rename")).toBe("off");
  });

  test("giving back the old name restores it literally, and tmux's own renaming only where the window had it", async () => {
    await pinWindowName(auto.windowId, "builder", auto.env);
    await restoreWindowName(auto.windowId, "#{pane_id};", true, auto.env);
    expect(windowName(auto.windowId)).toBe("#{pane_id};");
    expect(option(auto.windowId, "automatic-rename")).toBe("on");
    const bob = server.agent("bob").windowId;
    await pinWindowName(bob, "bob2", auto.env);
    await restoreWindowName(bob, "bob", false, auto.env);
    expect(windowName(bob)).toBe("bob");
    expect(option(bob, "automatic-rename")).toBe("off");
  });

  test("a window that is gone: pinning fails saying to check it exists; giving back is best effort and quiet", async () => {
    const gone = server.addWindow("short-lived", repo.dir).windowId;
    server.run(["kill-window", "-t", gone]);
    const failure = await pinWindowName(gone, "x", auto.env).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AgentmailError);
    expect((failure as AgentmailError).code).toBe("io");
    expect((failure as AgentmailError).message).toMatch(
      new RegExp(`^tmux could not rename your window ${gone} \\(can't find window: ${gone}\\); check that it still exists, then retry$`),
    );
    expect(await restoreWindowName(gone, "x", true, auto.env)).toBeUndefined();
  });
});

describe("agentmail name", () => {
  test("a name tmux would store otherwise is refused: the window keeps its name and tmux's renaming, nothing moves", async () => {
    // U+2028 passes the name rules, but tmux stores it as the octal escapes \342\200\250.
    const name = "line\u2028sep";
    await appendMessage(ensureRoot(repo.mailDir), createMessage("alice", "bash", "for the shell"));
    const refused = await runInProcess(["name", name], asAuto());
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toStartWith('error: tmux stored the name as "line\\342\\200\\250sep", not "line');
    expect(refused.stderr).toEndWith('"; choose a name of plain characters\n');
    expect(windowName(auto.windowId)).toBe("bash");
    expect(option(auto.windowId, "automatic-rename")).toBe("on");
    expect(readStatus(repo.mailDir, name)).toBeNull();
    // The registration made to move the old name's mail is gone again, and the mail waits where it was.
    expect(readStatus(repo.mailDir, "bash")).toBeNull();
    expect(unread("bash")).toEqual(["for the shell"]);
    expect(unread(name)).toEqual([]);
  });

  test("a name that looks like another agent's is taken, with a warning saying how to avoid the mix-up", async () => {
    const lookAlike = "b\u043eb"; // Cyrillic o
    const named = await runInProcess(["name", lookAlike], asAuto());
    expect(named.code).toBe(0);
    expect(named.stdout).toBe(`${lookAlike}\n`);
    expect(named.stderr).toBe(
      `warning: "${lookAlike}" looks like "bob", another agent's name: mail meant for one may reach the other; to avoid that, ` +
        "pick a name that differs in plain letters: agentmail name <other-name>\n",
    );
    expect(windowName(auto.windowId)).toBe(lookAlike);
    const json = await runInProcess(["name", lookAlike, "--json"], asAuto());
    expect(JSON.parse(json.stdout)).toEqual({
      name: lookAlike,
      pane: auto.paneId,
      warnings: [expect.stringContaining('looks like "bob"')],
    });
  });
});

describe("agentmail name, the caller's window", () => {
  test("renames the caller's window by id and pins it, registers name and pane, and prints the name", async () => {
    const named = await runInProcess(["name", "builder"], asAuto());
    expect(named).toEqual({ code: 0, stdout: "builder\n", stderr: "" });
    expect(windowName(auto.windowId)).toBe("builder");
    const options = server.run(["show-options", "-w", "-t", auto.windowId]);
    expect(options).toContain("automatic-rename off");
    expect(options).toContain("allow-rename off");
    expect(readStatus(repo.mailDir, "builder")).toMatchObject({
      name: "builder",
      pane: auto.paneId,
      window: auto.windowId,
      status: "ready",
    });
    expect(readStatus(repo.mailDir, "builder")!.server).toBe(auto.env.TMUX!.split(",").slice(0, 2).join(","));
    expect(readStatus(repo.mailDir, "builder")!.host).toBe(HOSTNAME);
    expect((await runInProcess(["recipients"], asAuto())).stdout).toMatch(/\nbuilder \[you\] {2}ready, seen \d+s ago\n/);
    // The hooks set the status on every turn: the pin stays with the pane.
    expect((await runInProcess(["status", "work"], asAuto())).code).toBe(0);
    expect(readStatus(repo.mailDir, "builder")).toMatchObject({ status: "work", window: auto.windowId, named_at: expect.any(String) });
    const again = await runInProcess(["name", "builder", "--json"], asAuto());
    expect(JSON.parse(again.stdout)).toEqual({ name: "builder", pane: auto.paneId });
  });

  test("a name with spaces, unicode or tmux's own syntax is taken literally; the old registration and unread mail move along", async () => {
    writeStatus(repo.mailDir, { name: "bash", status: "work", pane: auto.paneId });
    await appendMessage(repo.mailDir, createMessage("alice", "bash", "for the shell"));
    const odd = "#(touch pwned) #{pane_id} ünï;";
    const named = await runInProcess(["name", odd], asAuto());
    expect(named.code).toBe(0);
    expect(named.stderr).toBe(`moved 1 unread message sent to your previous name "bash" to "${odd}"\n`);
    expect(windowName(auto.windowId)).toBe(odd);
    expect(existsSync(join(repo.dir, "pwned"))).toBe(false);
    expect(readStatus(repo.mailDir, "bash")).toBeNull();
    expect(readStatus(repo.mailDir, odd)).toMatchObject({ status: "work", pane: auto.paneId });
    const received = await runInProcess(["receive"], asAuto());
    expect(received.stdout).toContain("for the shell");
  });

  test("refused, changing nothing: another window's name, a group's, a malformed one, one held on another tmux server", async () => {
    const before = windowName(auto.windowId);
    const taken = await runInProcess(["name", "bob"], asAuto());
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/^error: the name "bob" is taken by the window of pane %\d+ in session agents; choose another\n$/);
    await run("alice", "group", "add", "devs", "bob");
    expect((await runInProcess(["name", "devs"], asAuto())).stderr).toContain("is taken by a group (@devs)");
    for (const bad of ["", "-x", "@x", "a,b", "a:b", "a\u001bb", "x".repeat(65), "a\\b"]) {
      const refused = await runInProcess(["name", "--", bad], asAuto());
      expect({ bad, code: refused.code }).toEqual({ bad, code: 1 });
      expect(refused.stderr).toContain("cannot be an agent's name");
    }
    expect((await runInProcess(["name", "🚀".repeat(60)], asAuto())).stderr).toContain("too long for a mailbox");
    writeStatus(repo.mailDir, {
      name: "remote",
      status: "ready",
      pane: "%3",
      at: new Date(Date.now() - 1000),
      pin: {
        window: "@1",
        server: "/elsewhere/sock,1",
        host: "elsewhere",
      },
    });
    expect((await runInProcess(["name", "remote"], asAuto())).stderr).toStartWith(
      'error: the name "remote" belongs to an agent on host elsewhere (pane %3, last seen ',
    );
    expect((await runInProcess(["name"], asAuto())).code).toBe(1);
    expect(windowName(auto.windowId)).toBe(before);
    writeStatus(repo.mailDir, {
      name: "remote",
      status: "ready",
      pane: "%3",
      at: new Date(Date.now() - NAME_HELD_MS - 1000),
      pin: {
        window: "@1",
        server: "/elsewhere/sock,1",
        host: "elsewhere",
      },
    });
    expect((await runInProcess(["name", "remote"], asAuto())).code).toBe(0);
  });
});
