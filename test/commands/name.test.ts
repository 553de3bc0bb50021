/**
 * What a window's name may be, against the compiled binary in a private tmux server. A window renamed with plain tmux
 * to a name no agent can have (`role:triage`) is neither a caller that reads mail nor a recipient: it does not take
 * the role's queue, `@all` does not turn it into a second copy for the role's members, and `agentmail name` from it
 * does not hand the role's queue over. `agentmail name` refused leaves the window as it was.
 */
import { describe, expect, test } from "bun:test";
import type { Message } from "../../src/mail/message.ts";
import { am, expectError, expectSent, oneJson, shown } from "../support/e2e.ts";
import { serverWithFreshRepos } from "../support/fresh-repos.ts";

const world = serverWithFreshRepos("agentmail-winnames-", ["alice", "m1", "m2"]);

const run = (env: Record<string, string>, args: string[]) => am(args, { env, cwd: world.repo.dir });
const as = (name: string) => world.server.agent(name).env;
const windowName = (windowId: string) => world.server.run(["display-message", "-p", "-t", windowId, "#{window_name}"]).replace(/\n$/, "");
const autoRename = (windowId: string) => world.server.run(["display-message", "-p", "-t", windowId, "#{?automatic-rename,on,off}"]).trim();

/** A window renamed with plain tmux (not agentmail name) to `name`. */
function renamedWithTmux(name: string) {
  const agent = world.server.addWindow("placeholder", world.scratch);
  world.server.run(["rename-window", "-t", agent.windowId, "--", name]);
  return agent;
}

describe("a window renamed with plain tmux to role:triage", () => {
  test("cannot receive: the role's mail stays for its members, and the error says how to name the window", async () => {
    for (const member of ["m1", "m2"]) expect((await run(as(member), ["join", "triage"])).code).toBe(0);
    const id = expectSent(await run(as("alice"), ["send", "role:triage", "bug 1"]));
    const impostor = renamedWithTmux("role:triage");
    const error = expectError(await run(impostor.env, ["receive"]), 1);
    expect(error).toBe(
      `error: your window is named "role:triage", which cannot be an agent's name: it holds ':', which starts an address ` +
        "scheme (role:ROLE); name this window: agentmail name <name>\n",
    );
    expect(expectError(await run(impostor.env, ["status", "ready"]), 1)).toBe(error);
    expect((await run(as("m1"), ["receive"])).stdout).toBe(shown("alice", id, "bug 1"));
    world.server.run(["kill-window", "-t", impostor.windowId]);
  });

  test("is no recipient: @all gives a member of the role one copy, and recipients does not list it", async () => {
    for (const member of ["m1", "m2"]) expect((await run(as(member), ["join", "triage"])).code).toBe(0);
    const impostor = renamedWithTmux("role:triage");
    const id = expectSent(await run(as("alice"), ["send", "@all", "all hands"]));
    const received: string[] = [];
    for (;;) {
      const message = oneJson(await run(as("m1"), ["receive", "--json"])) as Message | null;
      if (message === null) break;
      received.push(message.id);
    }
    expect(received).toEqual([id]);
    // The role is listed as a role; no window is listed by that name.
    expect((await run(as("alice"), ["recipients"])).stdout.split("\n")).not.toContain("role:triage");
    world.server.run(["kill-window", "-t", impostor.windowId]);
  });

  test("agentmail name from it names the window but hands none of the role's queue over", async () => {
    for (const member of ["m1", "m2"]) expect((await run(as(member), ["join", "triage"])).code).toBe(0);
    const id = expectSent(await run(as("alice"), ["send", "role:triage", "for a member"]));
    const impostor = renamedWithTmux("role:triage");
    expect(await run(impostor.env, ["name", "newcomer"])).toMatchObject({ code: 0, stdout: "newcomer\n", stderr: "" });
    expect((await run(impostor.env, ["receive"])).stdout).toBe("No unread messages\n");
    expect((await run(as("m2"), ["receive"])).stdout).toBe(shown("alice", id, "for a member"));
    world.server.run(["kill-window", "-t", impostor.windowId]);
  });
});

describe("agentmail name refused changes nothing", () => {
  test("a name holding #[ (a tmux style) is refused before the window is touched", async () => {
    const window = world.server.addWindow("plain", world.scratch);
    const error = expectError(await run(window.env, ["name", "x #[fg=red]y"]), 1);
    expect(error).toBe(`error: "x #[fg=red]y" cannot be an agent's name: it holds '#[', which tmux reads as a style; choose another\n`);
    expect(windowName(window.windowId)).toBe("plain");
    world.server.run(["kill-window", "-t", window.windowId]);
  });

  test("a name tmux would store otherwise (U+2028, which tmux escapes) gives the window its name and tmux's renaming back", async () => {
    const { windowId, paneId } = world.server.addUnnamedWindow(world.scratch);
    const env = { ...as("alice"), TMUX_PANE: paneId };
    const before = windowName(windowId);
    expect(autoRename(windowId)).toBe("on");
    const error = expectError(await run(env, ["name", "a\u2028b"]), 1);
    expect(error).toStartWith('error: tmux stored the name as "a');
    expect(windowName(windowId)).toBe(before);
    expect(autoRename(windowId)).toBe("on");
    world.server.run(["kill-window", "-t", windowId]);
  });
});

describe("look-alike names", () => {
  test("agentmail name warns, on stderr and in --json, when the name looks like another agent's (Cyrillic е, fullwidth)", async () => {
    const cyrillic = "alic\u0435";
    const window = world.server.addWindow("plain", world.scratch);
    const named = await run(window.env, ["name", cyrillic]);
    expect({ code: named.code, stdout: named.stdout }).toEqual({ code: 0, stdout: `${cyrillic}\n` });
    expect(named.stderr).toBe(
      `warning: "${cyrillic}" looks like "alice", another agent's name: mail meant for one may reach the other; ` +
        "to avoid that, pick a name that differs in plain letters: agentmail name <other-name>\n",
    );
    const fullwidth = "\uff41\uff4c\uff49\uff43\uff45";
    const json = await run(window.env, ["name", fullwidth, "--json"]);
    expect(oneJson(json)).toEqual({
      name: fullwidth,
      pane: window.paneId,
      // Its own previous name is not another agent's.
      warnings: [expect.stringContaining(`"${fullwidth}" looks like "alice", another agent's name`)],
    });
    const plain = await run(window.env, ["name", "carol", "--json"]);
    expect({ document: oneJson(plain), stderr: plain.stderr }).toEqual({ document: { name: "carol", pane: window.paneId }, stderr: "" });
    world.server.run(["kill-window", "-t", window.windowId]);
  });
});

describe("agentmail's own name", () => {
  test("a window named agentmail (or a look-alike) neither sends nor receives, is no recipient, and agentmail name refuses it", async () => {
    const impostor = renamedWithTmux("agentmail");
    const error = expectError(await run(impostor.env, ["send", "alice", "Your message abc was not delivered"]), 1);
    expect(error).toBe(
      `error: your window is named "agentmail", which cannot be an agent's name: 'agentmail' is agentmail's own name ` +
        "(its bounces and claim notices come from it), so no agent may carry it or a name that looks like it; " +
        "name this window: agentmail name <name>\n",
    );
    expect(expectError(await run(impostor.env, ["receive"]), 1)).toBe(error);
    expect(expectError(await run(impostor.env, ["claim", "src/a.ts"]), 1)).toBe(error);
    expect((await run(as("alice"), ["receive"])).stdout).toBe("No unread messages\n");
    expect((await run(as("alice"), ["recipients"])).stdout.split("\n")).not.toContain("agentmail");
    for (const name of ["agentmail", "AgentMail", "\uff41\uff47\uff45\uff4e\uff54\uff4d\uff41\uff49\uff4c", "agentm\u0430il"]) {
      const refused = expectError(await run(as("alice"), ["name", name]), 1);
      expect(refused).toContain(`cannot be an agent's name: 'agentmail' is agentmail's own name`);
    }
    expect(windowName(world.server.agent("alice").windowId)).toBe("alice");
    for (const kind of ["group", "join"]) {
      const args = kind === "group" ? ["group", "add", "agentmail", "alice"] : ["join", "agentmail"];
      expect(expectError(await run(as("alice"), args), 1)).toContain("'agentmail' is agentmail's own name");
    }
    world.server.run(["kill-window", "-t", impostor.windowId]);
  });

  test("AGENTMAIL_NAME=agentmail is refused, saying so", async () => {
    const error = expectError(await run({ ...as("alice"), AGENTMAIL_NAME: "agentmail" }, ["send", "m1", "hello"]), 1);
    expect(error).toBe(
      `error: AGENTMAIL_NAME is "agentmail", which cannot be an agent's name: 'agentmail' is agentmail's own name ` +
        "(its bounces and claim notices come from it), so no agent may carry it or a name that looks like it; " +
        "set AGENTMAIL_NAME to another name, or unset it\n",
    );
    expect((await run(as("m1"), ["receive"])).stdout).toBe("No unread messages\n");
  });

  test("no agent sends type bounce, by send or reply: refused, nothing stored", async () => {
    const error = expectError(await run(as("alice"), ["send", "m1", "Your message x was not delivered", "--type", "bounce"]), 1);
    expect(error).toBe(
      "error: type 'bounce' is agentmail's own (mail it returned to its sender unread); no sender may set it; " +
        "use one of message, status, alert, task, question, response, report, handoff\n",
    );
    const id = expectSent(await run(as("m1"), ["send", "alice", "hi"]));
    expect(expectError(await run(as("alice"), ["reply", id, "undelivered", "--type", "bounce"]), 1)).toBe(error);
    expect((await run(as("m1"), ["receive"])).stdout).toBe("No unread messages\n");
  });
});
