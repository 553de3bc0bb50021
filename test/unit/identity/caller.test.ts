/** Parsing the one tmux call that tells who is calling and which windows exist on the server. */
import { describe, expect, test } from "bun:test";
import { requireOneWindowNamed } from "../../../src/identity/caller.ts";
import { AgentmailError } from "../../../src/mail/errors.ts";
import { parseCaller, resolveCaller, sameNamedWindows } from "../../../src/tmux/caller.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";

const M = "AMmarker";
const self = (session: string, window: string, name: string) => `${M}self\t${session}\t${window}\t${name}\n`;
const window = (session: string, sessionName: string, id: string, pane: string, name: string) =>
  `${M}window\t${session}\t${sessionName}\t${id}\t0\t${id === "@0" ? 1 : 0}\t${pane}\t${name}\n`;

describe("parseCaller", () => {
  test("the caller's session's windows, and every window of the server", () => {
    const out =
      self("$0", "@1", "bob") +
      window("$0", "main", "@0", "%0", "alice") +
      window("$0", "main", "@1", "%1", "bob") +
      window("$1", "other", "@2", "%2", "bob");
    const caller = parseCaller(out, M, "%1")!;
    expect(caller.windows.map((each) => each.name)).toEqual(["alice", "bob"]);
    expect(caller.serverWindows).toHaveLength(3);
    expect(caller.windows.map((each) => each.auto)).toEqual([true, false]);
    expect(sameNamedWindows(caller, "bob").map((each) => `${each.paneId} ${each.sessionName}`)).toEqual(["%1 main", "%2 other"]);
  });

  test("a window name with tabs and newlines stays one name", () => {
    const caller = parseCaller(self("$0", "@0", "a\tb") + window("$0", "s", "@0", "%0", "a\tb\nself\tx"), M, "%0")!;
    expect(caller.windows[0]!.name).toBe("a\tb\nself\tx");
  });

  test("a dead pane (every field empty) or a missing self record gives no caller", () => {
    expect(parseCaller(self("", "", "") + window("$0", "s", "@0", "%0", "alice"), M, "%9")).toBeNull();
    expect(parseCaller(window("$0", "s", "@0", "%0", "alice"), M, "%9")).toBeNull();
    expect(parseCaller("garbage", M, "%9")).toBeNull();
  });
});

describe("requireOneWindowNamed", () => {
  const out =
    self("$0", "@1", "bob") +
    window("$0", "main", "@1", "%1", "bob") +
    window("$1", "other", "@5", "%7", "bob") +
    window("$0", "main", "@0", "%0", "alice");
  const caller = parseCaller(out, M, "%1")!;

  test("a name held by one window passes", () => {
    expect(() => requireOneWindowNamed(caller, "alice")).not.toThrow();
    expect(() => requireOneWindowNamed(caller, "nobody")).not.toThrow();
  });

  test("a name held by two windows fails, naming both panes and the newest to rename", () => {
    let error: unknown;
    try {
      requireOneWindowNamed(caller, "bob");
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(AgentmailError);
    expect((error as AgentmailError).code).toBe("duplicate_name");
    expect((error as AgentmailError).message).toBe(
      '2 windows are named "bob" (panes %1 in session main, %7 in session other); rename one: tmux rename-window -t %7 <new-name>',
    );
  });
});

describe("resolveCaller in a long-lived process (the MCP server)", () => {
  test("calls made while a lookup is in flight share the next one, started after them: a rename before a call is seen by it", async () => {
    const repo = tempRepo();
    const server = TmuxServer.start(["bob"], repo.dir);
    try {
      const env = server.agent("bob").env;
      const inFlight = resolveCaller(env);
      server.run(["rename-window", "-t", env.TMUX_PANE!, "robert"]);
      const after = [resolveCaller(env), resolveCaller(env), resolveCaller(env)];
      expect(["bob", "robert"]).toContain((await inFlight).name);
      const callers = await Promise.all(after);
      expect(callers.map((caller) => caller.name)).toEqual(["robert", "robert", "robert"]);
      // One tmux client between them.
      expect(new Set(callers).size).toBe(1);
      // A call made once they are answered asks tmux again.
      server.run(["rename-window", "-t", env.TMUX_PANE!, "bobby"]);
      expect((await resolveCaller(env)).name).toBe("bobby");
    } finally {
      server.stop();
      repo.remove();
    }
  });
});
