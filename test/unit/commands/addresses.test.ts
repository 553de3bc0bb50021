/**
 * The address commands in process (coverage counts them) against a private tmux server: recipients marking names
 * tmux chose, send to lists, @all, groups and roles, group, join/leave/roles, onboard telling an unnamed window to
 * take a name, and receive taking role mail. `agentmail name` is in name.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runInProcess } from "../../support/in-process.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { watchWaits } from "../../support/waiters.ts";
import { waitFor } from "../../support/wait.ts";
import { receiveMail } from "../../../src/actions/receive.ts";
import { createMessage } from "../../../src/mail/message.ts";
import { appendMessage } from "../../../src/store/file/mailbox.ts";
import { updateMemberships } from "../../../src/store/file/memberships.ts";
import { ensureRoot } from "../../../src/store/paths.ts";
import { roleQueue } from "../../../src/store/file/role-mail.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";

let server: TmuxServer;
let repo: ReturnType<typeof tempRepo>;
/** A window tmux names itself (no -n): automatic-rename stays on. */
let auto: { paneId: string; windowId: string; env: Record<string, string> };

const env = (name: string) => ({ TMUX: server.agent(name).env.TMUX, TMUX_PANE: server.agent(name).paneId });
const as = (name: string) => ({ env: env(name), cwd: repo.dir });
const asAuto = () => ({ env: { TMUX: auto.env.TMUX!, TMUX_PANE: auto.paneId }, cwd: repo.dir });
const run = (name: string, ...argv: string[]) => runInProcess(argv, as(name));
const box = (name: string) => join(repo.mailDir, `${name}.jsonl`);
const lines = (path: string) =>
  existsSync(path)
    ? readFileSync(path, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];
const windowName = (windowId: string) => server.run(["display-message", "-p", "-t", windowId, "#{window_name}"]).replace(/\n$/, "");

beforeAll(() => {
  repo = tempRepo();
  server = TmuxServer.start(["alice", "bob", "bob smith", "ünï cödé"], repo.dir);
  const { windowId, paneId } = server.addUnnamedWindow(repo.dir);
  auto = { paneId, windowId, env: { ...server.agent("alice").env, TMUX_PANE: paneId } };
});
afterAll(() => {
  server.stop();
  repo.remove();
});
beforeEach(() => rmSync(repo.mailDir, { recursive: true, force: true }));

describe("recipients", () => {
  test("marks a name tmux chose [auto], in text and JSON, and lists groups and roles after the windows", async () => {
    const autoName = windowName(auto.windowId);
    expect((await run("alice", "recipients")).stdout).toBe(`alice [you]\nbob\nbob smith\nünï cödé\n${autoName} [auto]\n`);
    expect(await run("alice", "group", "add", "devs", "bob", "bob smith")).toMatchObject({ code: 0 });
    expect(await run("bob", "join", "triage")).toMatchObject({ code: 0 });
    const text = (await run("alice", "recipients")).stdout;
    expect(text).toEndWith(`@devs (group: bob, bob smith)\nrole:triage (role: bob)\n`);
    const json = JSON.parse((await run("alice", "recipients", "--json")).stdout);
    expect(json).toContainEqual({ name: autoName, you: false, auto: true, status: null, last_seen: null });
    expect(json).toContainEqual({ name: "alice", you: true, auto: false, status: null, last_seen: null });
    expect(json.slice(-2)).toEqual([
      { name: "@devs", members: ["bob", "bob smith"] },
      { name: "role:triage", members: ["bob"] },
    ]);
  });
});

describe("send to many", () => {
  test("a,b,c and repeated -r: one id printed once, the same id in each mailbox, the sender and repeats left out", async () => {
    const sent = await run("alice", "send", "bob,bob smith,bob,alice,ünï cödé", "standup in 5");
    expect(sent).toMatchObject({ code: 0, stderr: "" });
    const id = sent.stdout.trim();
    expect(sent.stdout).toMatch(/^[A-Za-z0-9]{8}\n$/);
    expect(lines(box("bob")).filter((message) => message.id === id)).toEqual([
      expect.objectContaining({ from: "alice", to: "bob", message: "standup in 5" }),
    ]);
    expect(lines(box("bob%20smith")).filter((message) => message.id === id)).toHaveLength(1);
    expect(lines(box("%C3%BCn%C3%AF%20c%C3%B6d%C3%A9")).filter((message) => message.id === id)).toHaveLength(1);
    expect(lines(box("alice")).some((message) => message.id === id)).toBe(false);
    const flags = await run("alice", "send", "-r", "bob", "-r", "bob smith", "-m", "-x is broken", "--json");
    const flagged = JSON.parse(flags.stdout).id;
    expect(lines(box("bob")).some((message) => message.id === flagged && message.message === "-x is broken")).toBe(true);
  });

  test("one unknown name means nothing is sent to anyone", async () => {
    const before = lines(box("bob")).length;
    const failed = await run("alice", "send", "bob,nobody", "hello");
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe("");
    expect(failed.stderr).toStartWith('error: no window named "nobody" in this tmux session');
    expect(lines(box("bob")).length).toBe(before);
  });

  test("a mailbox that cannot take its copy stops the send there, and the error says who has the message and who not", async () => {
    const root = ensureRoot(repo.mailDir);
    symlinkSync("/dev/null", join(root, "bob%20smith.jsonl"));
    const failed = await run("alice", "send", "bob,bob smith,ünï cödé", "partly");
    expect(failed).toMatchObject({ code: 1, stdout: "" });
    const [stored] = lines(box("bob"));
    expect(failed.stderr).toBe(
      `error: message ${stored.id} was stored for bob but not for bob smith,ünï cödé: ` +
        `${root}/bob%20smith.jsonl is a symlink, not a regular file; ` +
        "agentmail will not follow or wait on it; remove it; once that is fixed, send it again to bob smith,ünï cödé only\n",
    );
  });

  test("a window tmux named gets the mail with a warning; @all leaves it out and says so", async () => {
    const name = windowName(auto.windowId);
    const direct = await run("alice", "send", name, "hi shell");
    expect(direct.code).toBe(0);
    expect(direct.stderr).toBe(
      `warning: "${name}" is a name tmux chose (it follows the program running in that window) and will change; ` +
        "mail sent to it waits under " +
        "the old name. To keep it, run in that window: agentmail name <name>\n",
    );
    const all = await run("bob", "send", "@all", "everyone");
    const id = all.stdout.trim();
    expect(all.stderr).toContain(`@all left out windows whose name tmux chose, which change with their program: "${name}"`);
    for (const mailbox of ["alice", "bob%20smith"]) expect(lines(box(mailbox)).some((message) => message.id === id)).toBe(true);
    expect(lines(box("bob")).some((message) => message.id === id)).toBe(false);
    expect(lines(box(name)).some((message) => message.id === id)).toBe(false);
  });
});

describe("groups", () => {
  test("add creates and extends, list prints, send @group reaches every member but the sender, remove shrinks and deletes", async () => {
    expect((await run("alice", "group", "add", "devs", "bob", "alice")).stdout).toBe("devs: bob, alice\n");
    expect((await run("alice", "group", "add", "devs", "bob smith", "bob", "--json")).stdout).toBe(
      '{"name":"devs","members":["bob","alice","bob smith"]}\n',
    );
    expect(await run("alice", "group", "list")).toMatchObject({ code: 0, stdout: "devs: bob, alice, bob smith\n" });
    const sent = (await run("alice", "send", "@devs", "to the devs")).stdout.trim();
    expect(lines(box("bob")).some((message) => message.id === sent)).toBe(true);
    expect(lines(box("bob%20smith")).some((message) => message.id === sent)).toBe(true);
    expect(lines(box("alice")).some((message) => message.id === sent)).toBe(false);
    expect((await run("alice", "group", "remove", "devs", "alice")).stdout).toBe("devs: bob, bob smith\n");
    expect((await run("alice", "group", "remove", "devs")).stdout).toBe("removed group devs\n");
    expect(JSON.parse((await run("alice", "group", "list", "--json")).stdout)).toEqual([]);
  });

  test("a member that is no window, a window's name, a malformed name or a stranger are refused, changing nothing", async () => {
    const notWindow = await run("alice", "group", "add", "devs", "bob", "bobb");
    expect(notWindow.code).toBe(1);
    expect(notWindow.stderr).toStartWith('error: no window named "bobb" in this tmux session; did you mean "bob"');
    const windowName = await run("alice", "group", "add", "bob", "alice");
    expect(windowName.stderr).toMatch(
      /^error: a window is named "bob" \(pane %\d+\); a group cannot take a window's name, choose another\n$/,
    );
    expect((await run("alice", "group", "add", "a:b", "bob")).stderr).toContain("cannot be a group's name: it holds ':'");
    expect((await run("alice", "group", "add", "all", "bob")).stderr).toContain("@all already means");
    expect((await run("alice", "group", "add", "devs")).stderr).toBe(
      "error: name at least one member; usage: agentmail group add <group> <member>...\n",
    );
    expect((await run("alice", "group", "add")).code).toBe(1);
    expect(existsSync(join(repo.mailDir, ".groups.json"))).toBe(false);
    await run("alice", "group", "add", "devs", "bob");
    expect((await run("alice", "group", "remove", "devs", "alice")).stderr).toBe(
      'error: "alice" not in group "devs", whose members are "bob"\n',
    );
    expect((await run("alice", "group", "remove", "ops")).stderr).toBe(
      `error: no group named "ops"; run 'agentmail group list' to list the groups\n`,
    );
    expect((await run("alice", "group", "remove")).code).toBe(1);
    const unknown = await run("alice", "send", "@ops", "hi");
    expect(unknown.stderr).toContain('no group named "ops"');
  });

  test("a file of groups that does not parse is named, and sending to a plain name still works", async () => {
    writeFileSync(join(ensureRoot(repo.mailDir), ".groups.json"), "[1,2");
    expect((await run("alice", "group", "list")).stderr).toContain(".groups.json is not a JSON object of name lists; fix it, or remove it");
    expect((await run("alice", "send", "bob", "still fine")).code).toBe(0);
    writeFileSync(join(repo.mailDir, ".groups.json"), '{"devs":[1]}');
    expect((await run("alice", "group", "list")).stderr).toContain("holds something that is not a list of names");
  });
});

describe("roles", () => {
  test("join, leave and roles; joining twice or leaving twice changes nothing", async () => {
    expect((await run("bob", "join", "triage")).stdout).toBe("joined triage (members: bob)\n");
    expect((await run("bob", "join", "triage")).stdout).toBe("already in triage (members: bob)\n");
    expect((await run("bob smith", "join", "triage", "--json")).stdout).toBe(
      '{"role":"triage","members":["bob","bob smith"],"changed":true}\n',
    );
    expect((await run("alice", "roles")).stdout).toBe("triage: bob, bob smith (0 unread)\n");
    expect((await run("bob", "leave", "triage")).stdout).toBe("left triage (members: bob smith)\n");
    expect((await run("bob", "leave", "triage")).stdout).toBe("already not in triage (members: bob smith)\n");
    expect((await run("bob smith", "leave", "triage")).stdout).toBe("left triage (members: none)\n");
    expect(JSON.parse((await run("alice", "roles", "--json")).stdout)).toEqual([]);
    expect((await run("bob", "join", "x,y")).stderr).toContain("cannot be a role's name");
    expect((await run("bob", "join")).code).toBe(1);
    expect((await run("bob", "leave")).code).toBe(1);
  });

  test("a window tmux named may join, with a warning that its name will change", async () => {
    const joined = await runInProcess(["join", "triage"], asAuto());
    expect(joined.code).toBe(0);
    expect(joined.stderr).toContain("is a name tmux chose");
  });

  test("send role:R stores one message in the role's queue; a role with no members is exit 1", async () => {
    const none = await run("alice", "send", "role:triage", "anyone?");
    expect(none).toMatchObject({ code: 1, stdout: "" });
    expect(none.stderr).toBe(
      'error: role "triage" has no members, so no one would take the message; members join it with: agentmail join triage\n',
    );
    await run("bob", "join", "triage");
    await run("bob smith", "join", "triage");
    const id = (await run("alice", "send", "role:triage", "new bug: #34")).stdout.trim();
    const queue = roleQueue(repo.mailDir, "triage");
    expect(lines(join(queue.root, "role%3Atriage.jsonl"))).toEqual([
      expect.objectContaining({ id, from: "alice", to: "role:triage", read_flag: false }),
    ]);
    expect((await run("alice", "roles")).stdout).toBe("triage: bob, bob smith (1 unread)\n");
    // Every member's inbox lists it, marked with the role it came through; listing takes nothing.
    expect((await run("bob", "inbox")).stdout).toMatch(new RegExp(`^${id} +\\S+ +alice \\(role:triage\\) .*new bug: #34\\n$`));
    expect(JSON.parse((await run("bob smith", "inbox", "--json")).stdout)).toEqual([expect.objectContaining({ id, to: "role:triage" })]);
    // Exactly one member takes it; the other finds nothing.
    const first = await run("bob smith", "receive", "--json");
    expect(JSON.parse(first.stdout)).toMatchObject({ id, to: "role:triage" });
    expect((await run("bob", "receive")).stdout).not.toContain(id);
  });

  test("cleanup archives read role mail like any other, and removes a queue left empty", async () => {
    await run("bob", "join", "triage");
    await run("alice", "send", "role:triage", "done soon");
    await run("bob", "receive");
    const report = JSON.parse((await run("alice", "cleanup", "--read-hours", "0", "--json")).stdout);
    expect(report.archived).toContainEqual({ name: "role:triage", count: 1 });
    expect(report.removed).toContain("role:triage");
    expect(existsSync(join(roleQueue(repo.mailDir, "triage").root, "role%3Atriage.jsonl"))).toBe(false);
  });

  test("receive takes the member's own mail first, then its roles' mail, the oldest first across roles", async () => {
    const root = ensureRoot(repo.mailDir);
    await updateMemberships(root, "roles", (roles) => {
      roles.set("a-role", ["quiet"]);
      roles.set("b-role", ["quiet"]);
    });
    const put = (role: string, body: string, at: string) => {
      const queue = roleQueue(root, role);
      return appendMessage(ensureRoot(queue.root), createMessage("alice", queue.mailbox, body, new Date(at)));
    };
    await put("a-role", "a newer", "2026-01-02T00:00:00Z");
    await put("b-role", "b older", "2026-01-01T00:00:00Z");
    await appendMessage(root, createMessage("alice", "quiet", "own, newest", new Date("2026-01-03T00:00:00Z")));
    const taken: string[] = [];
    for (let i = 0; i < 4; i++) {
      const message = await receiveMail(new FileStore(root), "quiet", () => {}, { onSkip: () => {} });
      taken.push(message ? message.message : "none");
    }
    expect(taken).toEqual(["own, newest", "b older", "a newer", "none"]);
  });

  test("a waiting receive is woken by role mail", async () => {
    await run("bob", "join", "triage");
    const root = ensureRoot(repo.mailDir);
    const waits = watchWaits();
    const waiting = receiveMail(new FileStore(root), "bob", () => {}, { onSkip: () => {}, waitMs: 60_000 });
    await waitFor("bob's receive to wait on its watch", () => waits.begun > 0).finally(() => waits.restore());
    await run("alice", "send", "role:triage", "wake");
    expect(await waiting).toMatchObject({ message: "wake", to: "role:triage" });
  });
});

describe("onboard", () => {
  test("tells an agent whose window tmux named to pin a name, in text and in the SessionStart JSON; not one with a name", async () => {
    const line = "Give yourself a lasting name now: agentmail name <name>";
    const unnamed = await runInProcess(["onboard"], asAuto());
    expect(unnamed.stdout).toContain("Your window's name was chosen by tmux");
    expect(unnamed.stdout).toContain(line);
    expect(JSON.parse((await runInProcess(["onboard", "--hook-json"], asAuto())).stdout).hookSpecificOutput.additionalContext).toContain(
      line,
    );
    expect(JSON.parse((await runInProcess(["onboard", "--json"], asAuto())).stdout)).toMatchObject({ auto: true });
    const named = await run("alice", "onboard");
    expect(named.stdout).not.toContain(line);
    expect(named.stdout).toContain("agentmail send role:ROLE");
    expect(named.stdout.split("\n").length).toBeLessThan(40);
  });
});
