/**
 * Two tmux servers over one repository share its mail, against the compiled binary: a name registered from a live
 * pane of one server (by `status`, as the hooks do, or `agentmail name`) is not the other server's. A window of that
 * name on the other server cannot receive its mail, register as it, or take it with `agentmail name`, and the
 * error says what to do; once that pane is gone, the name is free. On the file store and on a private redis-server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { realpathSync } from "node:fs";
import { am, expectError, expectSent, shown } from "../support/e2e.ts";
import { serverWithFreshRepos } from "../support/fresh-repos.ts";
import { RedisServer } from "../support/redis-server.ts";
import { TmuxServer } from "../support/tmux-server.ts";

/** Server A: alice and bob. Server B (started beside it): another bob, and carol. */
let other: TmuxServer;
const world = serverWithFreshRepos("agentmail-twoservers-", ["alice", "bob"], (_server, scratch) => {
  other = TmuxServer.start(["bob", "carol"], realpathSync(scratch));
});
let redis: RedisServer;
let namespaces = 0;

beforeAll(async () => {
  redis = await RedisServer.start();
});

afterAll(async () => {
  other?.stop();
  await redis?.remove();
});

const STORES = {
  file: (): Record<string, string> => ({}),
  redis: (): Record<string, string> => ({ AGENTMAIL_URL: redis.url, AGENTMAIL_NAMESPACE: `two-${process.pid}-${++namespaces}` }),
};

for (const [engine, storeEnv] of Object.entries(STORES)) {
  describe(`on the ${engine} store`, () => {
    test("bob of server B cannot read, register as or take the name of bob of server A while A's pane lives", async () => {
      const store = storeEnv();
      const run = (env: Record<string, string>, args: string[]) => am(args, { env: { ...env, ...store }, cwd: world.repo.dir });
      const a = (name: string) => world.server.agent(name).env;
      const b = (name: string) => other.agent(name).env;
      // A's bob registers as the hooks do; nothing was registered from B.
      expect((await run(a("bob"), ["status", "ready"])).code).toBe(0);
      const id = expectSent(await run(a("alice"), ["send", "bob", "for A's bob"]));

      const refused = `error: the name "bob" belongs to the agent in pane ${world.server.agent("bob").paneId} of another tmux server`;
      const fix = "pick another name for this window: agentmail name <other-name>";
      for (const args of [["receive"], ["status", "ready"], ["inbox"]]) {
        const error = expectError(await run(b("bob"), args), 1);
        expect(error).toStartWith(refused);
        expect(error).toEndWith(`; ${fix}\n`);
      }
      // B's bob takes another name, handing A's bob's mail to no one; then no window of B may take "bob".
      expect(await run(b("bob"), ["name", "bob-b"])).toMatchObject({ code: 0, stdout: "bob-b\n", stderr: "" });
      const taken = expectError(await run(b("carol"), ["name", "bob"]), 1);
      expect(taken).toStartWith(refused);
      expect(other.run(["display-message", "-p", "-t", other.agent("carol").windowId, "#{window_name}"]).trim()).toBe("carol");
      expect((await run(a("bob"), ["receive"])).stdout).toBe(shown("alice", id, "for A's bob"));

      // A's bob goes (its window closed): the name is free on B.
      other.run(["rename-window", "-t", other.agent("bob").windowId, "bob"]);
      world.server.run(["kill-window", "-t", world.server.agent("bob").windowId]);
      expect(await run(b("bob"), ["receive"])).toMatchObject({ code: 0, stdout: "No unread messages\n", stderr: "" });
      expect((await run(b("bob"), ["status", "ready"])).code).toBe(0);
      world.server.addWindow("bob", world.scratch);
    });
  });
}
