/**
 * What the rich-mail end-to-end files share (inbox, read, reply, archive, search, and the rich-mail scenario): one
 * repository and one private tmux server with windows alice, bob and carol for the whole file, and an empty store
 * before each test. Registers its hooks where it is called (a file or a describe).
 */
import { afterAll, beforeAll, beforeEach, expect } from "bun:test";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { am, expectSent, type StoredMessage } from "./e2e.ts";
import { tempRepo } from "./repo.ts";
import { TmuxServer } from "./tmux-server.ts";

export interface RichMailWorld {
  readonly server: TmuxServer;
  readonly repo: ReturnType<typeof tempRepo>;
  /** The environment and cwd of an agent's window. */
  as(name: string): { env: Record<string, string>; cwd: string };
  mailbox(name: string): string;
  archiveOf(name: string): string;
  /** Sends from an agent and returns the printed id. */
  send(from: string, args: string[]): Promise<string>;
  /** Exit 0 and stderr as given (nothing, unless receive tells how many more are unread); returns stdout. */
  ok(from: string, args: string[], stderr?: string): Promise<string>;
}

export function richMailWorld(): RichMailWorld {
  const world = {
    as: (name: string) => ({ env: world.server.agent(name).env, cwd: world.repo.dir }),
    mailbox: (name: string) => join(world.repo.mailDir, `${name}.jsonl`),
    archiveOf: (name: string) => join(world.repo.mailDir, ".archive", `${name}.jsonl`),
    send: async (from: string, args: string[]) => expectSent(await am(["send", ...args], world.as(from))),
    ok: async (from: string, args: string[], stderr = "") => {
      const result = await am(args, world.as(from));
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr });
      return result.stdout;
    },
  } as { -readonly [K in keyof RichMailWorld]: RichMailWorld[K] };
  beforeAll(() => {
    world.repo = tempRepo();
    world.server = TmuxServer.start(["alice", "bob", "carol"], world.repo.dir);
  });
  afterAll(() => {
    world.server?.stop();
    world.repo?.remove();
  });
  /** Each test starts from an empty store in the same repository and tmux server. */
  beforeEach(() => {
    rmSync(world.repo.mailDir, { recursive: true, force: true });
    mkdirSync(world.repo.mailDir, { mode: 0o700 });
  });
  return world;
}

/** Text lines, each ended by a newline. */
export const lines = (...each: string[]) => each.map((line) => line + "\n").join("");
/** The ids of a JSON list of messages. */
export const idsOf = (value: unknown) => (value as StoredMessage[]).map((message) => message.id);

/**
 * The stored line of the alert "Build is red" (type alert, priority urgent, tags ci and main, needs a response): the
 * seed's six fields, then the set fields in their one order.
 */
export function expectStoredBuildIsRed(stored: object): void {
  expect(Object.keys(stored)).toEqual([
    "id",
    "from",
    "to",
    "message",
    "read_flag",
    "created_at",
    "subject",
    "type",
    "priority",
    "tags",
    "needs_response",
  ]);
  expect(stored).toMatchObject({
    subject: "Build is red",
    type: "alert",
    priority: "urgent",
    tags: ["ci", "main"],
    needs_response: true,
  });
}
