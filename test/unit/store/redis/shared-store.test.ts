/**
 * The commands against a store that is not the file store, as AGENTMAIL_URL selects it: here a stand-in for the
 * Redis store (the engine's own module is replaced; it keeps its mail in a file store and plays another host's
 * agents), so what the commands do with any shared store is checked without a server. With the real Redis store the
 * two-host end-to-end tests check the same through redis-server.
 *
 * Checked: a server that cannot be reached fails a command with exit 1 and one `error: cannot reach the mail server
 * at …` line and no id, while `receive --hook` stays silent; a name another host's agent holds is refused with the
 * host, the pane and how to pick another; `recipients` lists other hosts' agents; send, @all and groups reach them;
 * the store is closed when the command ends. And on the file store, today's rule: no agent of another host is an
 * address.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, mock, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createMessage } from "../../../../src/mail/message.ts";
import { runMailman } from "../../../../src/mailman/loop.ts";
import { FileStore } from "../../../../src/store/file/file-store.ts";
import { MailServerUnreachable } from "../../../../src/store/server.ts";
import type { AgentEntry, Presence, Store, Touch } from "../../../../src/store/store.ts";
import { runInProcess } from "../../../support/in-process.ts";
import { tempRepo } from "../../../support/repo.ts";
import { TmuxServer } from "../../../support/tmux-server.ts";
import { waitFor } from "../../../support/workflow.ts";

const DOWN = "redis://down.example:6379";
const UP = "redis://mail.example:6379";

/** A shared store: the mail in a file store, plus agents registered from host-b, and names it refuses. */
class SharedStore extends FileStore {
  override readonly sharedAcrossHosts = true as never;
  /** Like Redis, it keeps no AGENTMAIL_NAME claims. */
  override readonly nameClaims = null as never;
  readonly elsewhere: AgentEntry[] = [];
  readonly held = new Map<string, AgentEntry>();
  touched: Presence[] = [];
  closed = 0;

  override async statuses(): Promise<AgentEntry[]> {
    return [...(await super.statuses()), ...this.elsewhere];
  }

  override async status(name: string): Promise<AgentEntry | null> {
    return this.elsewhere.find((entry) => entry.name === name) ?? (await super.status(name));
  }

  override async touch(presence: Presence): Promise<Touch> {
    this.touched.push(presence);
    const holder = this.held.get(presence.name);
    return holder ? { accepted: false, holder } : { accepted: true };
  }

  override close(): void {
    this.closed++;
  }
}

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
let shared: SharedStore;

mock.module("../../../../src/store/redis/open.ts", () => ({
  openRedisStore: async (place: { env: Record<string, string | undefined> }): Promise<Store> => {
    if (place.env.AGENTMAIL_URL === DOWN)
      throw new MailServerUnreachable(DOWN, "the connection was refused or closed (is redis-server running?)");
    return shared;
  },
}));

const as = (name: string, url: string | null = UP) => ({
  env: {
    TMUX: server.agent(name).env.TMUX,
    TMUX_PANE: server.agent(name).paneId,
    AGENTMAIL_HOST: "host-a",
    ...(url === null ? {} : { AGENTMAIL_URL: url }),
  },
  cwd: repo.dir,
});
const lines = (name: string) => {
  const path = join(repo.mailDir, `${name}.jsonl`);
  return existsSync(path)
    ? readFileSync(path, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line))
    : [];
};

beforeAll(() => {
  repo = tempRepo();
  server = TmuxServer.start(["alice", "bob"], repo.dir);
});
afterAll(() => {
  server.stop();
  repo.remove();
});
beforeEach(() => {
  shared = new SharedStore(repo.mailDir);
  shared.elsewhere.push({
    name: "carol",
    status: "ready",
    since: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:00.000Z",
    pane: "%9",
    host: "host-b",
    last_seen: "2026-01-02T00:00:00.000Z",
  });
});

describe("a mail server that cannot be reached", () => {
  test("send fails with exit 1 and one line naming the server, and prints no id", async () => {
    const sent = await runInProcess(["send", "bob", "hi"], as("alice", DOWN));
    expect(sent).toEqual({
      code: 1,
      stdout: "",
      stderr: `error: cannot reach the mail server at ${DOWN}: the connection was refused or closed (is redis-server running?)\n`,
    });
    const json = await runInProcess(["receive", "--json"], as("bob", DOWN));
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).error).toMatchObject({ code: "io" });
  });

  test("receive --hook stays silent with exit 0", async () => {
    expect(await runInProcess(["receive", "--hook"], as("bob", DOWN))).toEqual({ code: 0, stdout: "", stderr: "" });
  });
});

describe("identity across hosts", () => {
  test("every command that resolves the caller records its presence, and the command closes the store when it ends", async () => {
    expect((await runInProcess(["inbox"], as("bob"))).code).toBe(0);
    const tmux = { server: String(server.agent("bob").env.TMUX).replace(/,0$/, ""), host: expect.any(String) };
    expect(shared.touched).toEqual([{ name: "bob", host: "host-a", pane: server.agent("bob").paneId, tmux }]);
    expect(shared.closed).toBe(1);
  });

  test("a name an agent of another host holds is refused, naming its host and pane and how to pick another", async () => {
    shared.held.set("alice", { ...shared.elsewhere[0]!, name: "alice", pane: "%4", host: "host-b" });
    const refused = await runInProcess(["send", "bob", "hi", "--json"], as("alice"));
    expect(refused.code).toBe(1);
    const error = JSON.parse(refused.stdout).error;
    expect(error.code).toBe("name_taken");
    expect(error.message).toContain('the name "alice" belongs to an agent on host host-b (pane %4');
    expect(error.message).toContain("agentmail name <new-name>");
    expect(lines("bob")).toHaveLength(0);
    // Naming the window something else is the way out: the new name is claimed, the held one is not asked.
    const renamed = await runInProcess(["name", "alice2"], as("alice"));
    expect(renamed.code).toBe(0);
    expect(shared.touched.at(-1)).toMatchObject({ name: "alice2", host: "host-a" });
    server.run(["rename-window", "-t", server.agent("alice").windowId, "alice"]);
    server.run(["set-option", "-w", "-t", server.agent("alice").windowId, "automatic-rename", "off"]);
  });

  test("recipients lists the agents of other hosts, with their host (and last seen in --json)", async () => {
    const text = await runInProcess(["recipients"], as("alice"));
    expect(text.stdout).toMatch(/\ncarol \[host host-b\] {2}ready, seen \d+d ago\n/);
    const json = JSON.parse((await runInProcess(["recipients", "--json"], as("alice"))).stdout);
    expect(json).toContainEqual({
      name: "carol",
      you: false,
      auto: false,
      host: "host-b",
      status: "ready",
      last_seen: "2026-01-02T00:00:00.000Z",
    });
  });

  test("send, @all and a group reach an agent registered on another host", async () => {
    expect((await runInProcess(["send", "carol", "direct"], as("alice"))).code).toBe(0);
    expect((await runInProcess(["send", "@all", "everyone"], as("alice"))).code).toBe(0);
    expect((await runInProcess(["group", "add", "mixed", "bob", "carol"], as("alice"))).code).toBe(0);
    expect((await runInProcess(["send", "@mixed", "the group"], as("alice"))).code).toBe(0);
    expect(lines("carol").map((message) => message.message)).toEqual(["direct", "everyone", "the group"]);
  });

  test("on the file store an agent registered from another host is no address (today's rule)", async () => {
    const pin = { window: "@9", server: "/tmp/other,1", host: "host-b" };
    await new FileStore(repo.mailDir).writeStatus({ name: "carol", status: "ready", pane: "%9", at: new Date(), pin });
    const refused = await runInProcess(["send", "carol", "hi", "--json"], as("alice", null));
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error.code).toBe("unknown_recipient");
  });
});

describe("the mailman on a shared store", () => {
  test("leaves an agent registered on another host to that host's mailman", async () => {
    await shared.append(createMessage("alice", "carol", "for host-b's mailman"));
    await shared.append(createMessage("alice", "dave", "for nobody here"));
    const logs: string[] = [];
    const stop = new AbortController();
    const env = { ...server.agent("alice").env, AGENTMAIL_HOST: "host-a" };
    const running = runMailman({
      store: shared,
      root: repo.mailDir,
      env,
      project: null,
      intervalMs: 60_000,
      sweepMs: 50,
      typing: "all",
      log: (line) => logs.push(line),
      signal: stop.signal,
    });
    // dave has no registration, so this host's mailman looks for his window: the canary that a sweep ran.
    await waitFor("a sweep to look for dave's window", () => logs.some((line) => line.includes('"dave"')), 30_000, 25);
    stop.abort();
    await running;
    expect(logs.some((line) => line.includes('dropped "dave": no window with that name'))).toBe(true);
    expect(logs.filter((line) => line.includes("carol"))).toEqual([]);
  });
});
