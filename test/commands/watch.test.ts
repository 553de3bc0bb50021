/**
 * `agentmail watch` against the compiled binary, in a private tmux server, read through capture-pane as the person
 * beside the agents would see it, on the file store and on a private redis-server: live arrival from another pane,
 * 80×24 and a resize, a thread, compose as the person (the agent receives it with `agentmail receive`), hostile
 * bodies that move no cursor and change no colour or title, NO_COLOR, q; and `--once`, `--json` without a terminal.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { am, expectSent } from "../support/e2e.ts";
import { fakeClaude, installFakeAgents, startFakeAgent } from "../support/fake-agent.ts";
import { HUMAN, RoomWorld, Running, waitUntil, type Engine } from "../support/room-world.ts";
import { waitFor } from "../support/workflow.ts";

const ESC = "\u001b";
/** Would act on a terminal: a title (OSC 0), a clear and a cursor move (CSI), a colour (SGR), a CR, a C1 CSI. */
const HOSTILE = `T1 ${ESC}]0;pwned\u0007 ${ESC}[2J${ESC}[5;5H ${ESC}[31mRED\rCR \u009b2J end`;
/** What the screen shows of it: every control escaped, in place. */
const SHOWN = "T1 \\x1b]0;pwned\\x07 \\x1b[2J\\x1b[5;5H \\x1b[31mRED\\rCR \\x9b2J end";

for (const engine of ["file", "redis"] as Engine[]) {
  describe(`watch on the ${engine} store`, () => {
    let world: RoomWorld;
    let room: { paneId: string };
    const screen = () => world.tmux.run(["capture-pane", "-p", "-t", room.paneId]);
    const styled = () => world.tmux.run(["capture-pane", "-p", "-e", "-t", room.paneId]);
    const keys = (...args: string[]) => world.tmux.run(["send-keys", "-t", room.paneId, ...args]);
    const typed = (text: string) => world.tmux.run(["send-keys", "-t", room.paneId, "-l", text]);
    const shows = (what: string, text: string | RegExp): Promise<string> =>
      waitUntil(what, () => {
        const now = screen();
        return (typeof text === "string" ? now.includes(text) : text.test(now)) ? now : null;
      });

    beforeAll(async () => {
      world = await RoomWorld.start(engine, ["alice", "bob"]);
      room = world.tmux.addWindow("room", world.repo.dir);
      world.tmux.run(["resize-window", "-t", room.paneId, "-x", "80", "-y", "24"]);
    });

    afterAll(async () => {
      await world?.remove();
    });

    test("at 80×24 it shows the agents and mail arriving live from another pane, in colour, nothing wider than 80", async () => {
      keys("-l", `${world.humanCommand("watch")}; echo "watch exited $?"`);
      keys("Enter");
      await shows("the agents", /alice\s+ready/);
      world.typeIn("alice", "send bob --subject 'PR #12' --priority urgent 'PR #12 is ready'");
      const now = await shows("the new mail", /> \d\d:\d\d:\d\d alice\s+→ bob\s+!\s+PR #12\s+stored/);
      const lines = now.split("\n");
      expect(lines[0]).toMatch(/^agentmail watch · as ana · 3 agents · 1 copies · no mailman · (file|redis) /);
      expect(lines[1]).toMatch(/^ {2}AGENT\s+STATUS\s+CLI\s+UNREAD\s+SEEN\s+(HOST\s+)?REACH OR PROBLEM/);
      expect(now).toMatch(new RegExp(`${HUMAN} \\(you\\)\\s+ready`));
      for (const line of lines) expect([...line].length).toBeLessThanOrEqual(80);
      // Colour on a terminal without NO_COLOR: the header in reverse video.
      expect(styled().split("\n")[0]).toContain(`${ESC}[7m`);
      // The agent reads it: the state follows.
      expect((await world.am("bob", ["receive"])).stdout).toContain("PR #12 is ready");
      await shows("the read state", /alice\s+→ bob\s+!\s+PR #12\s+read/);
    });

    test("Enter opens the thread with its body; Esc goes back", async () => {
      const id = (await world.am("alice", ["send", "bob", "--subject", "Deploy", "line one\nline two"])).stdout.trim();
      await shows("the new mail", "Deploy");
      keys("Home");
      keys("Enter");
      const thread = await shows("the thread", "  line two");
      expect(thread).toContain(`alice → bob (stored)`);
      expect(thread).toContain(id);
      expect(thread).toContain("Subject: Deploy");
      expect(thread).toContain("  line one");
      keys("Escape");
      await shows("the feed again", "── mail");
      expect((await world.am("bob", ["receive"])).stdout).toContain("line two");
    });

    test("c composes as the person; the agent receives it with agentmail receive", async () => {
      keys("c");
      await shows("the To prompt", "To (name");
      typed("bob");
      keys("Enter");
      typed("From the room");
      keys("Enter");
      typed("please write a summary");
      keys("Enter");
      await shows("the send", /sent \w{8} to bob/);
      const received = await world.am("bob", ["receive"]);
      expect(received.stdout).toMatch(
        new RegExp(`^From: ${HUMAN}\\nID: \\w{8}\\nSubject: From the room\\n\\n> please write a summary\\n$`),
      );
    });

    test("r replies to the selected message, in its thread", async () => {
      const question = (await world.am("bob", ["send", HUMAN, "--subject", "Merge?", "may I merge?"])).stdout.trim();
      await shows("the question", "Merge?");
      keys("Home");
      keys("r");
      await shows("the reply prompt", "Reply: ");
      typed("yes");
      keys("Enter");
      await shows("the reply", /replied \w{8} to bob/);
      const reply = JSON.parse((await world.am("bob", ["receive", "--json"])).stdout);
      expect(reply).toMatchObject({ from: HUMAN, in_reply_to: question, subject: "Re: Merge?", message: "yes" });
    });

    test("a resize redraws at the new size", async () => {
      const rule = (text: string) => text.split("\n").find((line) => line.startsWith("── mail"))!;
      expect([...rule(screen())].length).toBe(80);
      world.tmux.run(["resize-window", "-t", room.paneId, "-x", "100", "-y", "30"]);
      await waitUntil("the redraw at 100 columns", () => [...(rule(screen()) ?? "")].length === 100);
      world.tmux.run(["resize-window", "-t", room.paneId, "-x", "80", "-y", "24"]);
      await waitUntil("the redraw at 80 columns", () => [...(rule(screen()) ?? "")].length === 80);
    });

    test("q quits and gives the terminal back", async () => {
      keys("q");
      await shows("the exit", "watch exited 0");
      expect(screen()).not.toContain("── mail");
    });

    test("with NO_COLOR, a hostile body shows escaped: no colour, no clear, no cursor move, no title", async () => {
      const title = world.tmux.run(["display-message", "-p", "-t", room.paneId, "#{pane_title}"]);
      keys("-l", `clear; NO_COLOR=1 ${world.humanCommand("watch")}; echo "watch exited $?"`);
      keys("Enter");
      await shows("the room", /alice\s+ready/);
      await world.am("alice", ["send", "bob", HOSTILE]);
      const now = await shows("the hostile mail", "T1 ");
      const row = now.split("\n").find((line) => line.includes("alice") && line.includes("T1"))!;
      // On its own row, after its sender, as text: cut at 80 columns.
      expect(row).toMatch(/^> \d\d:\d\d:\d\d alice\s+→ bob\s+T1 \\x1b\]0;pwned\\x07 \\x1b\[2J.*…\s+stored$/);
      expect(now.split("\n")[0]).toMatch(/^agentmail watch/);
      keys("Home");
      keys("Enter");
      const thread = await shows("the thread", "end");
      expect(thread).toContain(`  ${SHOWN}`);
      // No SGR at all: nothing was coloured, neither by the view (NO_COLOR) nor by the body.
      expect(styled()).not.toContain(`${ESC}[`);
      expect(world.tmux.run(["display-message", "-p", "-t", room.paneId, "#{pane_title}"])).toBe(title);
      keys("q");
      await shows("the exit", "watch exited 0");
    });

    test("without a terminal: --once prints a plain snapshot, --json streams events, and the live view refuses", async () => {
      const env = world.humanEnv();
      const once = await am(["watch", "--once", "--limit", "3"], { env, cwd: world.repo.dir });
      expect(once.code).toBe(0);
      expect(once.stdout).not.toContain(ESC);
      expect(once.stdout).toMatch(/^agentmail watch · /);
      expect(once.stdout.split("\n").filter((line) => / → /.test(line))).toHaveLength(3);
      expect(once.stdout).toContain("T1 \\x1b]0;pwned");
      const snapshot = JSON.parse((await am(["watch", "--once", "--json"], { env, cwd: world.repo.dir })).stdout);
      expect(snapshot.feed.some((item: { body: string }) => item.body === HOSTILE)).toBe(true);
      const refused = await am(["watch"], { env, cwd: world.repo.dir });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("use --once or --json");
      const stream = new Running(["watch", "--json"], env, world.repo.dir);
      try {
        expect(JSON.parse(await stream.line()).event).toBe("agents");
        const id = (await world.am("alice", ["send", "bob", "streamed"])).stdout.trim();
        for (;;) {
          const event = JSON.parse(await stream.line());
          if (event.event !== "mail") continue;
          expect(event.item).toMatchObject({ id, from: "alice", mailbox: "bob", body: "streamed", delivery: { state: "stored" } });
          break;
        }
      } finally {
        expect(await stream.stop()).toBe(0);
      }
    });
  });
}

/**
 * The room a supervisor runs in a terminal, on two projects of one tmux server: `app` (this repository: twelve
 * agents) and `lib` (alice, librarian); watch runs at 80×24 outside tmux's agents, with small thresholds so that a
 * check waits for a condition, not for minutes.
 */
const TWELVE = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "zoe"];

for (const engine of ["file", "redis"] as Engine[]) {
  describe(`the supervisor's room in a terminal, on the ${engine} store`, () => {
    let world: RoomWorld;
    let room: { paneId: string };
    const screen = () => world.tmux.run(["capture-pane", "-p", "-t", room.paneId]);
    const keys = (...args: string[]) => world.tmux.run(["send-keys", "-t", room.paneId, ...args]);
    const typed = (text: string) => world.tmux.run(["send-keys", "-t", room.paneId, "-l", text]);
    const shows = (what: string, text: string | RegExp): Promise<string> =>
      waitFor(
        () => `${what}; the screen:\n${screen()}`,
        () => {
          const now = screen();
          return (typeof text === "string" ? now.includes(text) : text.test(now)) ? now : null;
        },
      );
    const received = async (agent: string) => JSON.parse((await world.am(agent, ["receive", "--json"])).stdout || "null");
    const bottom = () => screen().trimEnd().split("\n").at(-1)!;

    beforeAll(async () => {
      world = await RoomWorld.start(engine, TWELVE, { project: "lib", agents: ["alice", "librarian"] });
      room = world.tmux.addWindow("room", world.repo.dir);
      world.tmux.run(["resize-window", "-t", room.paneId, "-x", "80", "-y", "24"]);
      const settings = { AGENTMAIL_STALLED_AFTER: "3s", AGENTMAIL_UNANSWERED_AFTER: "3s", AGENTMAIL_LOCK_TIMEOUT: "2" };
      keys("-l", `${world.humanCommand("watch", settings)}; echo "watch exited $?"`);
      keys("Enter");
      await shows("the room", / {2}AGENT 1-\d+\/13 /);
    });

    afterAll(async () => {
      await world?.remove();
    });

    test("at 80×24, Tab gives the agent list the keys and every one of the twelve agents (and the person) is reached; Enter shows its mail", async () => {
      const first = screen();
      expect(first.split("\n")[0]).toMatch(/^agentmail watch · as ana · 13 agents · 0 copies · no mailman · /);
      expect(first).not.toContain("zoe");
      for (const line of first.split("\n")) expect([...line].length).toBeLessThanOrEqual(80);
      keys("Tab");
      for (let i = 0; i < 13; i++) keys("Down");
      const last = await shows("the last agent", /> zoe\s/);
      expect(last).toMatch(/ {2}AGENT 8-13\/13 /);
      keys("Enter");
      await shows("zoe's mail", "── mail · agent zoe · 0 of 0 copies · esc clears");
      keys("Escape");
      await shows("all the mail", "── mail · 0 copies");
    });

    test("compose: To is checked on Enter; a name two projects have reaches this project's, name@project and a list theirs", async () => {
      const send = async (to: string, body: string, reaches: string) => {
        keys("c");
        await shows("the To prompt", "To (name");
        typed(to);
        keys("Enter");
        await shows("the check", `to ${reaches}`);
        keys("Enter");
        typed(body);
        keys("Enter");
        return (await shows("the send", new RegExp(`sent (\\w{8}) to ${to.replaceAll(".", "\\.")}`))).match(/sent (\w{8}) to/)![1]!;
      };
      const toAlice = await send("alice", "to app's alice", "alice");
      expect(await received("alice")).toMatchObject({ id: toAlice, message: "to app's alice" });
      expect(await received("alice@lib")).toBeNull();
      const lib = world.projectNames.get("lib")!;
      const toLib = await send("alice@lib", "to lib's alice", `alice@${lib}`);
      expect(await received("alice@lib")).toMatchObject({ id: toLib, message: "to lib's alice" });
      const toList = await send("bob,librarian@lib", "to a list", `bob, librarian@${lib}`);
      expect(await received("bob")).toMatchObject({ id: toList });
      expect(await received("librarian@lib")).toMatchObject({ id: toList });
      // A To no agent has: refused before anything else is typed, the whole reason shown, the To kept to correct.
      keys("c");
      await shows("the To prompt", "To (name");
      typed("alicia");
      keys("Enter");
      const refused = await shows("the refusal", "cannot send to alicia");
      expect(refused).toContain('"alice"');
      // The next step in the room's terms (mail/next-steps.ts), not the CLI's.
      expect(refused.replace(/\s+/g, " ")).toContain(
        "pick a name from the room's agent list, or write name@project for another project's agent",
      );
      expect(refused).not.toContain("agentmail recipients");
      expect(bottom()).toMatch(/^To \(name.*: alicia▏$/);
      keys("Escape");
    });

    test("what needs the person: mail to them shows first, n lists it, Enter opens it, r answers it and it is gone", async () => {
      const id = expectSent(
        await world.am("librarian@lib", ["send", `${HUMAN}@${world.projectNames.get("app")}`, "--subject", "Index", "rebuilt"]),
      );
      await shows("the needs", "── needs you (1)");
      expect(screen()).toMatch(/to you\s+librarian@…→ ana\s+Index/);
      keys("n");
      await shows("the needs view", "enter opens · r replies");
      keys("Enter");
      await shows("the thread", id);
      keys("r");
      await shows("the reply prompt", "Reply: ");
      typed("thanks");
      keys("Enter");
      await shows("the reply", /replied \w{8} to librarian@/);
      expect(await received("librarian@lib")).toMatchObject({ in_reply_to: id, message: "thanks" });
      keys("Escape");
      keys("Escape");
      await waitUntil("the needs to empty", () => !screen().includes("── needs you"));
    });

    test("a stalled agent is marked with why, within the threshold, and unmarked once it reads", async () => {
      await startFakeAgent(world.tmux, "bob", fakeClaude(installFakeAgents(world.scratch)));
      while ((await received("bob")) !== null);
      expectSent(await world.am("alice", ["send", "bob", "are you there?"]));
      keys("Tab");
      keys("Home");
      await shows("bob stalled", /~ bob\s.*stalled: 1 unread/);
      expect(await received("bob")).toMatchObject({ message: "are you there?" });
      await waitUntil("bob unmarked", () => /^ {2}bob\s/m.test(screen()) || /^> bob\s/m.test(screen()));
      keys("Tab");
    });

    test("l shows the claims (holder, shared or exclusive, reason, time left, waiters) and the mailman", async () => {
      expect((await world.am("carol", ["claim", "src/auth/**", "--reason", "refactor"])).code).toBe(0);
      expect((await world.am("dave", ["claim", "src/auth/login.ts"])).code).not.toBe(0);
      keys("l");
      const claims = await shows("the claim", /src\/auth\/\*\*\s+carol\s+exclusive\s+\d+m left · waiting: dave/);
      expect(claims).toContain("mailman: not running for this store");
      expect(claims.split("\n")[0]).toContain("1 need you");
      keys("Escape");
      await shows("the room", "── mail");
    });

    test("a send that fails keeps the message in its prompt with the whole error; Enter sends it again", async () => {
      keys("c");
      await shows("the To prompt", "To (name");
      typed("erin");
      keys("Enter");
      await shows("the check", "to erin");
      keys("Enter");
      typed("a draft worth keeping");
      const mend = await world.blockWrites("erin");
      try {
        keys("Enter");
        await shows("the failure", "not sent (your message is kept");
        expect(bottom()).toBe("Message (Ctrl-J new line, Enter sends): a draft worth keeping▏");
      } finally {
        await mend();
      }
      keys("Enter");
      await shows("the send", /sent \w{8} to erin/);
      expect(await received("erin")).toMatchObject({ from: HUMAN, message: "a draft worth keeping" });
      keys("q");
      await shows("the exit", "watch exited 0");
    });
  });
}
