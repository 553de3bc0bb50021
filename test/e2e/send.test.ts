/** `agentmail send` end to end: its flags, and never reading stdin when the message is given. */
import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { tempRepo } from "../support/repo.ts";
import { am, expectSent, ID, oneJson, storedMessages, sharedSession } from "../support/workflow.ts";

const session = sharedSession();
const { inRepo, drain } = session;
let repo: ReturnType<typeof tempRepo>, alice: Record<string, string>, bob: Record<string, string>;
beforeAll(() => ({ repo, alice, bob } = session));

const bobsMailbox = () => join(repo.mailDir, "bob.jsonl");

describe("send", () => {
  beforeAll(() => drain(bob));

  const lastStored = () => storedMessages(bobsMailbox()).at(-1)!;

  test("-r and -m instead of positionals", async () => {
    const id = expectSent(await am(["send", "-r", "bob", "-m", "short flags"], inRepo(alice)));
    expect(lastStored()).toMatchObject({ id, from: "alice", to: "bob", message: "short flags", read_flag: false });
  });

  test("--recipient and --message instead of positionals", async () => {
    const id = expectSent(await am(["send", "--message", "long flags", "--recipient", "bob"], inRepo(alice)));
    expect(lastStored()).toMatchObject({ id, to: "bob", message: "long flags" });
  });

  test('a flag written after a positional is still a flag: send bob -m x stores "x"', async () => {
    const id = expectSent(await am(["send", "bob", "-m", "x"], inRepo(alice)));
    expect(lastStored()).toMatchObject({ id, to: "bob", message: "x" });
  });

  test('-m "-x is broken" stores the dash text', async () => {
    const id = expectSent(await am(["send", "-r", "bob", "-m", "-x is broken"], inRepo(alice)));
    expect(lastStored()).toMatchObject({ id, message: "-x is broken" });
  });

  test("a message flag wins over a message positional", async () => {
    const id = expectSent(await am(["send", "bob", "positional body", "-m", "flag body"], inRepo(alice)));
    expect(lastStored()).toMatchObject({ id, to: "bob", message: "flag body" });
  });

  test("a recipient flag wins over a recipient positional", async () => {
    const id = expectSent(await am(["send", "carol", "-r", "bob", "-m", "to bob"], inRepo(alice)));
    expect(lastStored()).toMatchObject({ id, to: "bob", message: "to bob" });
  });

  for (const [label, args, body] of [
    ["positional message", ["send", "bob", "given as argument"], "given as argument"],
    ["-m message", ["send", "-r", "bob", "-m", "given as flag"], "given as flag"],
    ["--json", ["send", "bob", "given with json", "--json"], "given with json"],
  ] as const) {
    test(`never reads stdin when the message is given (${label}): an open, silent stdin pipe does not block`, async () => {
      const result = await am([...args], { ...inRepo(alice), stdin: "pipe-open" });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
      expect(lastStored().message).toBe(body);
    });
  }

  test('--json prints {"id":…} and that id is stored', async () => {
    const result = await am(["send", "bob", "with json", "--json"], inRepo(alice));
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    const document = oneJson(result) as { id: string };
    expect(Object.keys(document)).toEqual(["id"]);
    expect(document.id).toMatch(ID);
    expect(lastStored()).toMatchObject({ id: document.id, message: "with json" });
  });
});
