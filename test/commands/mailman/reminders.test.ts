/**
 * The mailman's reminders, end to end: a daemon of the compiled binary types its fixed reminder into the panes of a
 * private tmux server, and the screens (capture-pane) show where it landed. Windows named `2`, `-x` and `a.b` get
 * their own reminder and nobody else's; a pane in copy mode waits; `status work` holds reminders and `status ready`
 * releases them; a reminder repeats every interval while mail stays unread; a burst of mail gives one reminder;
 * after everything is received, no more reminders.
 *
 * Nothing here measures time: each wait is a poll with a generous deadline. To know the mailman has looked at the
 * store (for "nothing happened" checks), a canary agent gets mail too and its reminders are counted.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { fakeClaude, startFakeAgent } from "../../support/fake-agent.ts";
import { mailmanWorld } from "../../support/mailman-world.ts";
import { am, expectSent, occurrences, oneJson, paneText, waitFor } from "../../support/workflow.ts";

const ONE = "agentmail: 1 unread message. Run agentmail receive.";
/** A reminder the stand-in agent CLI took: it answers each line it is given with `got: <line>`. */
const TAKEN = /got: agentmail: \d+ unread messages?\. Run agentmail receive\./;

/**
 * The mailman's world (test/support/mailman-world.ts) with each window a registered agent: a stand-in agent CLI at
 * its prompt, and a mailman daemon started with these arguments.
 */
function world(names: string[], mailmanArgs: string[]) {
  const w = Object.assign(mailmanWorld(names, TAKEN), {
    /** Log lines saying a reminder was typed for this agent. */
    logged: (name: string) => occurrences(w.log(), `reminded ${JSON.stringify(name)} in `),
    async receiveAll(name: string): Promise<void> {
      for (let i = 0; i < 200; i++) {
        const result = await am(["receive", "--json"], w.as(name));
        expect(result.code).toBe(0);
        if (oneJson(result) === null) return;
      }
    },
  });
  beforeAll(async () => {
    // Each window runs an agent CLI and registers (as the hooks do with `status ready`): the mailman types only into
    // an agent CLI at its prompt.
    for (const name of names) {
      await startFakeAgent(w.server, name, fakeClaude(w.bin));
      expect((await am(["status", "ready"], w.as(name))).code).toBe(0);
    }
    await w.startMailman(mailmanArgs);
  });
  return w;
}

describe("reminders (interval 2 s)", () => {
  const NAMES = ["alice", "bob", "-x", "2", "a.b", "carol", "dave", "erin", "olga"];
  // Window indexes: alice 0, bob 1, -x 2, 2 3, a.b 4: a reminder aimed at "2" by name would land in "-x".
  const w = world(NAMES, ["--interval", "2", "--sweep", "0.2"]);
  const counts = () => Object.fromEntries(NAMES.map((name) => [name, w.reminders(name)]));

  for (const target of ["2", "-x", "a.b"]) {
    test(`a window named ${JSON.stringify(target)} gets the reminder in its own pane and in no other`, async () => {
      const before = counts();
      expectSent(await am(["send", "--", target, `mail for ${target}`], w.as("alice")));
      await w.waitReminders(target, before[target]! + 1);
      expect(occurrences(paneText(w.server, target), ONE)).toBeGreaterThanOrEqual(before[target]! + 1);
      const after = counts();
      for (const name of NAMES) if (name !== target) expect({ name, reminders: after[name] }).toEqual({ name, reminders: before[name] });
      // The log (<repo>/.git/mail/.mailman/log) names the agent and the pane it typed into, once the mailman has seen
      // the reminder submitted (it looks again after typing it).
      const paneId = w.server.agent(target).paneId;
      const namesPane = (entry: string) => entry.includes(JSON.stringify(target)) && new RegExp(`${paneId}\\b`).test(entry);
      const logged = () => w.log().split("\n").some(namesPane);
      await waitFor(() => `the log to name ${JSON.stringify(target)} and pane ${paneId}:\n${w.log()}`, logged);
      await w.receiveAll(target);
    });
  }

  describe("while carol's pane is in copy mode, dave works, olga is offline, and erin's mail stays unread", () => {
    const carolPane = () => w.server.agent("carol").paneId;
    const inMode = () => w.server.run(["display-message", "-p", "-t", carolPane(), "#{pane_in_mode}"]).trim();

    beforeAll(async () => {
      w.server.run(["copy-mode", "-t", carolPane()]);
      expect(inMode()).toBe("1");
      expect((await am(["status", "work"], w.as("dave"))).code).toBe(0);
      expect((await am(["status", "offline"], w.as("olga"))).code).toBe(0);
      for (const name of ["carol", "dave", "olga", "erin"]) expectSent(await am(["send", name, `mail for ${name}`], w.as("alice")));
      // erin's mail was sent last: her second reminder comes from a sweep that started after every send above,
      // and a whole interval after her first one, so the mailman has had every chance to remind the others.
      await w.waitReminders("erin", 2);
    });

    test("a pane in copy mode gets nothing while in copy mode", () => {
      expect(inMode()).toBe("1");
      // The log says why it waits (it names the pane); the wording is the mailman's own.
      expect(w.log()).toMatch(new RegExp(`"carol".*${carolPane()}\\b.*copy mode`));
      expect(w.reminders("carol")).toBe(0);
      expect(w.logged("carol")).toBe(0);
    });

    test("an agent with status work gets no reminder", () => {
      expect(w.reminders("dave")).toBe(0);
      expect(w.logged("dave")).toBe(0);
    });

    test("an agent with status offline gets no reminder", () => {
      expect(w.reminders("olga")).toBe(0);
      expect(w.logged("olga")).toBe(0);
    });

    test("a reminder repeats after the interval while mail stays unread", async () => {
      expect(w.reminders("erin")).toBeGreaterThanOrEqual(2);
      expect(occurrences(paneText(w.server, "erin"), ONE)).toBeGreaterThanOrEqual(2);
      // Logged once the mailman has seen the reminder submitted, a moment after it shows on the screen.
      await waitFor(
        () => `the log to show 2 reminders of erin:\n${w.log()}`,
        () => w.logged("erin") >= 2,
      );
      await w.receiveAll("erin");
    });

    test("after leaving copy mode the pane gets the reminder", async () => {
      w.server.run(["send-keys", "-t", carolPane(), "-X", "cancel"]);
      expect(inMode()).toBe("0");
      await w.waitReminders("carol", 1);
      expect(paneText(w.server, "carol")).toContain(ONE);
      await w.receiveAll("carol");
    });

    test("after status ready the agent that was working gets the reminder", async () => {
      expect(w.reminders("dave")).toBe(0);
      expect((await am(["status", "ready"], w.as("dave"))).code).toBe(0);
      await w.waitReminders("dave", 1);
      expect(paneText(w.server, "dave")).toContain(ONE);
      await w.receiveAll("dave");
      await w.receiveAll("olga");
    });
  });

  test("after the agents receive everything, no more reminders", async () => {
    // Everyone above received all their mail. A canary's reminders show the mailman keeps sweeping: between its
    // first and its second reminder a whole interval passes, and nobody else may get a reminder in it.
    const canary = w.reminders("bob");
    expectSent(await am(["send", "bob", "canary"], w.as("alice")));
    await w.waitReminders("bob", canary + 1);
    const before = counts();
    const loggedBefore = Object.fromEntries(NAMES.map((name) => [name, w.logged(name)]));
    await w.waitReminders("bob", before.bob! + 1);
    const after = counts();
    for (const name of NAMES) {
      if (name === "bob") continue;
      expect({ name, reminders: after[name] }).toEqual({ name, reminders: before[name] });
      expect({ name, logged: w.logged(name) }).toEqual({ name, logged: loggedBefore[name]! });
    }
    await w.receiveAll("bob");
  });

  test("the mailman's status counts its reminders and names its last action", async () => {
    const status = oneJson(await am(["mailman", "status", "--json"], w.as("alice"))) as {
      running: boolean;
      reminders: number;
      last_action: string | null;
    };
    expect(status.running).toBe(true);
    expect(status.reminders).toBeGreaterThanOrEqual(7);
    expect(status.last_action).toMatch(/^reminded /);
  });
});

describe("a burst of mail", () => {
  // A long interval: every reminder after the first one would be a repeat within the interval.
  const w = world(["alice", "frank", "gina"], ["--interval", "600", "--sweep", "0.2"]);

  test("100 messages to one agent give exactly one reminder within the interval", async () => {
    const sender = async (from: number) => {
      for (let i = from; i < 100; i += 4) expectSent(await am(["send", "frank", `burst ${i}`], w.as("alice")));
    };
    await Promise.all([0, 1, 2, 3].map(sender));
    await w.waitReminders("frank", 1);
    // A canary sent after the burst: once gina is reminded, the mailman has looked at frank's 100 unread too.
    expectSent(await am(["send", "gina", "canary"], w.as("alice")));
    await w.waitReminders("gina", 1);
    expect(w.reminders("frank")).toBe(1);
    expect(w.logged("frank")).toBe(1);
    expect(w.reminders("alice")).toBe(0);
  });

  test("receiving part of the mail does not trigger another reminder within the interval", async () => {
    for (let i = 0; i < 5; i++) expect((await am(["receive"], w.as("frank"))).code).toBe(0);
    expectSent(await am(["send", "alice", "canary 2"], w.as("gina")));
    await w.waitReminders("alice", 1);
    expect(w.reminders("frank")).toBe(1);
  });
});
