/**
 * The command-line surface of the compiled binary: help and version, unknown commands and flags, the exit-code
 * contract for "not inside tmux", the one-line `error:` / `--json` error shapes, and the hints usage errors give.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { am, expectError, expectJsonError, expectSent, oneJson, storedMessages } from "../support/e2e.ts";
import { tempRepo } from "../support/repo.ts";
import { outsideTmuxEnv, TmuxServer } from "../support/tmux-server.ts";

let server: TmuxServer;
let repo: ReturnType<typeof tempRepo>;
let alice: Record<string, string>;

beforeAll(() => {
  repo = tempRepo();
  server = TmuxServer.start(["alice", "bob", "carol x"], repo.dir);
  alice = server.agent("alice").env;
});

afterAll(() => {
  server?.stop();
  repo?.remove();
});

describe("help and version", () => {
  for (const args of [["--help"], ["-h"], ["send", "--help"], ["send", "-h"], ["receive", "--help"], ["receive", "-h"]]) {
    test(`agentmail ${args.join(" ")} prints usage on stdout and exits 0, even outside tmux`, async () => {
      const result = await am(args, { env: outsideTmuxEnv(), cwd: repo.dir });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
      expect(result.stdout).toContain("Usage:");
      expect(result.stdout).toContain(args[0] === "send" ? "agentmail send" : args[0] === "receive" ? "agentmail receive" : "agentmail");
      if (args[0] === "--help" || args[0] === "-h") {
        expect(result.stdout).toContain("send");
        expect(result.stdout).toContain("receive");
      }
    });
  }

  test("send --help documents the flags", async () => {
    const result = await am(["send", "--help"], { env: alice, cwd: repo.dir });
    expect(result.code).toBe(0);
    for (const flag of ["-r", "--recipient", "-m", "--message"]) expect(result.stdout).toContain(flag);
  });

  test("receive --help documents --json and --hook", async () => {
    const result = await am(["receive", "--help"], { env: alice, cwd: repo.dir });
    expect(result.code).toBe(0);
    for (const flag of ["--json", "--hook"]) expect(result.stdout).toContain(flag);
  });

  test("send --help inside tmux sends nothing", async () => {
    const result = await am(["send", "bob", "hello", "--help"], { env: alice, cwd: repo.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Usage:");
    expect(existsSync(join(repo.mailDir, "bob.jsonl"))).toBe(false);
  });

  test("--version prints the version, the commit and the build time, and exits 0", async () => {
    const result = await am(["--version"], { env: outsideTmuxEnv(), cwd: repo.dir });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\S* \(commit [0-9a-f]{12}(-dirty)?, built \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)\n$/);
  });
});

describe("usage errors exit 1 with one error: line", () => {
  test("unknown command", async () => {
    expectError(await am(["bogus"], { env: alice, cwd: repo.dir }), 1);
  });

  test("unknown command suggests the closest one", async () => {
    const stderr = expectError(await am(["recieve"], { env: alice, cwd: repo.dir }), 1);
    expect(stderr).toContain("receive");
  });

  test("unknown flag on send, nothing stored", async () => {
    expectError(await am(["send", "bob", "hi", "--bogus"], { env: alice, cwd: repo.dir }), 1);
    expectError(await am(["send", "--bogus", "bob", "hi"], { env: alice, cwd: repo.dir }), 1);
    expect(existsSync(join(repo.mailDir, "bob.jsonl"))).toBe(false);
  });

  test("unknown flag on receive", async () => {
    expectError(await am(["receive", "--bogus"], { env: alice, cwd: repo.dir }), 1);
    expectError(await am(["receive", "-z"], { env: alice, cwd: repo.dir }), 1);
  });

  test("unknown root flag", async () => {
    expectError(await am(["--bogus"], { env: alice, cwd: repo.dir }), 1);
  });

  test("surplus argument to send", async () => {
    expectError(await am(["send", "bob", "hello", "world"], { env: alice, cwd: repo.dir }), 1);
    expect(existsSync(join(repo.mailDir, "bob.jsonl"))).toBe(false);
  });

  test("a flag that needs a value but has none", async () => {
    expectError(await am(["send", "bob", "-m"], { env: alice, cwd: repo.dir }), 1);
    expectError(await am(["send", "-r"], { env: alice, cwd: repo.dir }), 1);
  });

  describe("a newline inside an argument still gives a one-line error", () => {
    const cases: string[][] = [
      ["foo\nbar"],
      ["send", "--fo\no", "bob", "x"],
      ["send", "bob", "hello", "wor\nld"],
      ["send", "bo\nb", "x"],
      ["receive", "extra\narg"],
    ];
    for (const args of cases) {
      test(JSON.stringify(args), async () => {
        expectError(await am(args, { env: alice, cwd: repo.dir }), 1);
      });
    }
  });

  test("--json turns a usage error into one JSON document on stdout", async () => {
    const error = expectJsonError(await am(["send", "--json", "bob", "hi", "--bogus"], { env: alice, cwd: repo.dir }), 1);
    expect(error.message).toContain("--bogus");
  });
});

describe("--json holds everywhere: one JSON document on stdout, exit 0", () => {
  test("agentmail --json: the root's help, listing the commands", async () => {
    const result = await am(["--json"], { env: outsideTmuxEnv(), cwd: repo.dir });
    const help = oneJson(result) as { command: string; commands: { name: string }[] };
    expect(help.command).toBe("agentmail");
    expect(help.commands.map((command) => command.name)).toContain("send");
  });

  test("agentmail --version --json", async () => {
    const result = await am(["--version", "--json"], { env: outsideTmuxEnv(), cwd: repo.dir });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    const head = Bun.spawnSync(["git", "rev-parse", "HEAD"], { cwd: import.meta.dir })
      .stdout.toString()
      .trim();
    expect(oneJson(result)).toEqual({
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      // The binary was built from this checkout (maybe with changes not committed yet).
      commit: expect.stringMatching(new RegExp(`^${head}(-dirty)?$`)),
      built_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
  });

  test("agentmail hooks --json and agentmail send --help --json", async () => {
    for (const args of [
      ["hooks", "--json"],
      ["send", "--help", "--json"],
    ]) {
      const result = await am(args, { env: outsideTmuxEnv(), cwd: repo.dir });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
      expect(oneJson(result)).toMatchObject({ command: `agentmail ${args[0]}`, usage: expect.stringContaining(`agentmail ${args[0]}`) });
    }
  });
});

describe("a bare command group prints its help on stdout with exit 0", () => {
  for (const args of [[], ["hooks"]]) {
    test(`agentmail ${args.join(" ")}`.trim(), async () => {
      const result = await am(args, { env: outsideTmuxEnv(), cwd: repo.dir });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
      expect(result.stdout).toContain(`Usage: agentmail ${args.join(" ")}${args.length ? " " : ""}<command> [options]`);
    });
  }
});

describe("usage errors say what was meant", () => {
  const cases: [string, string[], string][] = [
    ["receive --wait abc", ["receive", "--wait", "abc"], "error: --wait takes a number of seconds, not 'abc'\n"],
    ["receive --wait -5", ["receive", "--wait", "-5"], "error: --wait takes a non-negative number of seconds, not '-5'\n"],
    [
      "mailman restart",
      ["mailman", "restart"],
      "error: unknown command 'restart' for 'agentmail mailman'; run 'agentmail mailman --help' to see the commands\n",
    ],
    ["version", ["version"], "error: unknown command 'version'; did you mean '--version'? Run 'agentmail --help' to see the commands\n"],
    ["sned", ["sned", "bob", "hi"], "error: unknown command 'sned'; did you mean 'send'? Run 'agentmail --help' to see the commands\n"],
    [
      "receive --wiat 5",
      ["receive", "--wiat", "5"],
      "error: unknown option '--wiat' for 'agentmail receive'; did you mean '--wait'? Run 'agentmail receive --help' to see its options\n",
    ],
    [
      'send carol x hi, to a window named "carol x"',
      ["send", "carol", "x", "hi"],
      `error: unexpected argument 'hi' for 'agentmail send'; a window is named "carol x"; did you mean to quote "carol x"?\n`,
    ],
    [
      "send bob hello world",
      ["send", "bob", "hello", "world"],
      "error: unexpected argument 'world' for 'agentmail send'; quote a message that has spaces\n",
    ],
    [
      'send bob "-x is broken"',
      ["send", "bob", "-x is broken"],
      "error: '-x is broken' is not an option of 'agentmail send'; to give text that starts with '-', put -- before it: " +
        "agentmail send bob -- '-x is broken'\n",
    ],
    [
      'send bob "-hi there": text, not -h (help) with -i',
      ["send", "bob", "-hi there"],
      "error: '-hi there' is not an option of 'agentmail send'; to give text that starts with '-', put -- before it: " +
        "agentmail send bob -- '-hi there'\n",
    ],
  ];
  for (const [label, args, stderr] of cases) {
    test(label, async () => {
      expect(expectError(await am(args, { env: alice, cwd: repo.dir }), 1)).toBe(stderr);
      expect(existsSync(join(repo.mailDir, "bob.jsonl"))).toBe(false);
    });
  }
});

describe("options end at --, and a flag's value is that value, even -h or --no-…", () => {
  // To "carol x": the tests below check that bob's mailbox was never created.
  test("send 'carol x' -- --help stores the message '--help'; send 'carol x' -m -h stores '-h'", async () => {
    const first = expectSent(await am(["send", "carol x", "--", "--help"], { env: alice, cwd: repo.dir }));
    const second = expectSent(await am(["send", "carol x", "-m", "-h"], { env: alice, cwd: repo.dir }));
    const third = expectSent(await am(["send", "carol x", "-m", "--no-verify breaks the build"], { env: alice, cwd: repo.dir }));
    const stored = storedMessages(join(repo.mailDir, "carol%20x.jsonl"));
    expect(stored.find((m) => m.id === first)?.message).toBe("--help");
    expect(stored.find((m) => m.id === second)?.message).toBe("-h");
    expect(stored.find((m) => m.id === third)?.message).toBe("--no-verify breaks the build");
  });
});

describe("not inside tmux: exit 2", () => {
  const cases: Array<[string, () => Record<string, string>]> = [
    ["$TMUX unset", () => outsideTmuxEnv()],
    [
      "$TMUX_PANE missing",
      () => {
        const env = { ...alice };
        delete env.TMUX_PANE;
        return env;
      },
    ],
    ["$TMUX_PANE malformed (abc)", () => ({ ...alice, TMUX_PANE: "abc" })],
    ["$TMUX_PANE empty", () => ({ ...alice, TMUX_PANE: "" })],
    ["$TMUX_PANE a dead pane (%9999)", () => ({ ...alice, TMUX_PANE: "%9999" })],
    ["$TMUX naming a server that is not running", () => ({ ...alice, TMUX: `${join(server.dir, "no-such-sock")},1,0` })],
  ];

  for (const [label, env] of cases) {
    test(`send with ${label}`, async () => {
      const stderr = expectError(await am(["send", "bob", "hello"], { env: env(), cwd: repo.dir }), 2);
      expect(stderr.toLowerCase()).toContain("tmux");
      expect(existsSync(join(repo.mailDir, "bob.jsonl"))).toBe(false);
    });

    test(`receive with ${label}`, async () => {
      expectError(await am(["receive"], { env: env(), cwd: repo.dir }), 2);
    });

    test(`send --json with ${label}`, async () => {
      const error = expectJsonError(await am(["send", "--json", "bob", "hello"], { env: env(), cwd: repo.dir }), 2);
      expect(error.code.length).toBeGreaterThan(0);
    });

    test(`receive --json with ${label}`, async () => {
      expectJsonError(await am(["receive", "--json"], { env: env(), cwd: repo.dir }), 2);
    });

    test(`receive --hook with ${label} is silent with exit 0`, async () => {
      const result = await am(["receive", "--hook"], { env: env(), cwd: repo.dir });
      expect(result).toMatchObject({ code: 0, stdout: "", stderr: "" });
    });
  }

  test("a dead pane never yields a message with an empty sender", async () => {
    await am(["send", "bob", "from nobody"], { env: { ...alice, TMUX_PANE: "%9999" }, cwd: repo.dir });
    expect(existsSync(join(repo.mailDir, "bob.jsonl"))).toBe(false);
  });
});

describe("outside a git repository", () => {
  let bare: string;
  beforeAll(() => {
    bare = mkdtempSync(join(tmpdir(), "agentmail-nogit-"));
  });
  afterAll(() => rmSync(bare, { recursive: true, force: true }));

  test("send without AGENTMAIL_DIR fails with exit 1 and names AGENTMAIL_DIR", async () => {
    const stderr = expectError(await am(["send", "bob", "hello"], { env: alice, cwd: bare }), 1);
    expect(stderr).toContain("AGENTMAIL_DIR");
  });

  test("receive without AGENTMAIL_DIR fails with exit 1 and names AGENTMAIL_DIR", async () => {
    const stderr = expectError(await am(["receive"], { env: server.agent("bob").env, cwd: bare }), 1);
    expect(stderr).toContain("AGENTMAIL_DIR");
  });

  test("receive --json without AGENTMAIL_DIR gives a JSON error", async () => {
    const error = expectJsonError(await am(["receive", "--json"], { env: server.agent("bob").env, cwd: bare }), 1);
    expect(error.message).toContain("AGENTMAIL_DIR");
  });

  test("a .env or bunfig.toml in the working directory is not read by the binary", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agentmail-dotenv-"));
    try {
      writeFileSync(join(dir, ".env"), `AGENTMAIL_DIR=${join(dir, "from-dotenv")}\n`);
      writeFileSync(join(dir, "preload.ts"), `require("fs").writeFileSync(${JSON.stringify(join(dir, "preloaded"))}, "");\n`);
      writeFileSync(join(dir, "bunfig.toml"), `preload = ["./preload.ts"]\n`);
      const stderr = expectError(await am(["send", "bob", "hello"], { env: alice, cwd: dir }), 1);
      expect(stderr).toContain("AGENTMAIL_DIR");
      expect(existsSync(join(dir, "from-dotenv"))).toBe(false);
      expect(existsSync(join(dir, "preloaded"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("with AGENTMAIL_DIR it works", async () => {
    const store = join(bare, "store");
    const id = expectSent(await am(["send", "bob", "hello"], { env: { ...alice, AGENTMAIL_DIR: store }, cwd: bare }));
    const result = await am(["receive"], { env: { ...server.agent("bob").env, AGENTMAIL_DIR: store }, cwd: bare });
    expect(result).toMatchObject({ code: 0, stdout: `From: alice\nID: ${id}\n\n> hello\n`, stderr: "" });
  });
});
