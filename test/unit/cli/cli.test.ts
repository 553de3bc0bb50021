/**
 * The command-line layer (src/cli) in process: first on a small tree of test commands, so each rule of the contract
 * is checked on its own, then on agentmail's own commands outside tmux (send and receive through it, in tmux:
 * test/unit/commands/send-and-receive.test.ts).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { defineCommand } from "citty";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { numberArg } from "../../../src/cli/args.ts";
import { defineCommand as defineTypedCommand } from "../../../src/cli/definitions.ts";
import { tokenize } from "../../../src/cli/tokenize.ts";
import { AgentmailError } from "../../../src/mail/errors.ts";
import { versionIn } from "../../../src/mail/version.ts";
import { runInProcess } from "../../support/in-process.ts";

/** What the test commands' runs saw, in order. */
let seen: unknown[] = [];

const leaf = defineCommand({
  meta: { name: "leaf", description: "A command with every kind of argument", examples: ["agentmail leaf one --count 2"] },
  args: {
    first: { type: "positional", required: false, valueHint: "first", description: "A word" },
    count: { type: "string", alias: "c", valueHint: "n", default: "3", description: "How many" },
    wait: { type: "string", optionalValue: true, valueHint: "seconds", description: "An optional value" },
    loud: { type: "boolean", alias: "l", description: "A switch" },
    mode: { type: "enum", options: ["fast", "slow"], description: "One of two" },
    colour: { type: "string", alias: ["color"], description: "A flag with a long alias" },
  },
  run({ args }) {
    const { first, count, wait, loud, mode, colour, json } = args;
    seen.push({ first, count, wait, loud, mode, colour, json, rest: args._ });
    return 7;
  },
});

const needy = defineCommand({
  meta: { name: "needy", description: "A required positional with options" },
  args: { kind: { type: "positional", required: true, valueHint: "kind", options: ["red", "blue"], description: "Which" } },
  run: ({ args }) => void seen.push(args.kind),
});

/** agentmail's own defineCommand: its run gets each argument typed, as declared (src/cli/args.ts). */
const typed = defineTypedCommand({
  meta: { name: "typed", description: "Numbers, lists and switches, typed" },
  args: {
    hours: { type: "string", unit: "hours", default: "2", description: "A number with a default" },
    wait: { type: "string", unit: "seconds", optionalValue: true, description: "A number whose value may be left out" },
    every: { type: "string", unit: "seconds", positive: true, description: "A positive number" },
    tag: { type: "string", multiple: true, description: "A list" },
    quiet: { type: "boolean", description: "A switch" },
    kind: { type: "positional", required: false, options: ["a", "b"], description: "One of two" },
  },
  run({ args }) {
    // Each is of its declared type: a typo, or a value used as another type, fails to compile.
    const hours: number = args.hours;
    const wait: number | null | undefined = args.wait;
    const every: number | undefined = args.every;
    const tags: string[] = args.tag;
    const quiet: boolean = args.quiet;
    const kind: "a" | "b" | undefined = args.kind;
    // @ts-expect-error: no argument of that name is declared
    void args.hour;
    seen.push({ hours, wait, every, tags, quiet, kind });
  },
});

const child = defineCommand({ meta: { name: "child", description: "A subcommand" }, run: () => void seen.push("child") });

const parent = defineCommand({
  meta: { name: "parent", description: "A command with its own run and a subcommand" },
  args: { quick: { type: "boolean", description: "A switch" } },
  subCommands: { child },
  run: () => void seen.push("parent"),
});

const group = defineCommand({
  meta: { name: "group", description: "A group without a run" },
  subCommands: { leaf: () => Promise.resolve(leaf), needy: async () => needy },
});

const failing = defineCommand({
  meta: { name: "failing", description: "Fails as agentmail fails" },
  run() {
    throw new AgentmailError("not_in_tmux", "not inside tmux; run agentmail in a tmux window");
  },
});

const crashing = defineCommand({
  meta: { name: "crashing", description: "Throws something that is not an AgentmailError" },
  run() {
    throw new Error("boom");
  },
});

const tree = defineCommand({
  meta: { name: "agentmail", version: "9.8.7", description: "Test tree" },
  args: { version: { type: "boolean", alias: "v", description: "Print the version" } },
  subCommands: { leaf, group, parent, failing, crashing, typed },
});

const cli = (...argv: string[]) => runInProcess(argv, { tree });

describe("the command-line layer on a tree of test commands", () => {
  beforeAll(() => {
    seen = [];
  });

  test("arguments reach the run typed, with the declared default, and its return value is the exit code", async () => {
    seen = [];
    expect(await cli("leaf", "one", "-l", "--mode", "slow")).toEqual({ code: 7, stdout: "", stderr: "" });
    expect(seen).toEqual([
      { first: "one", count: "3", wait: undefined, loud: true, mode: "slow", colour: undefined, json: false, rest: ["one"] },
    ]);
  });

  test("a flag after a positional is still a flag; a value may start with a dash; a long alias works", async () => {
    seen = [];
    await cli("leaf", "one", "--count", "-2", "--color=red", "-lc5");
    expect(seen).toEqual([expect.objectContaining({ first: "one", count: "5", loud: true, colour: "red" })]);
  });

  test("-- ends the options: what follows is positional, even --help", async () => {
    seen = [];
    expect((await cli("leaf", "--", "--help")).code).toBe(7);
    expect(seen).toEqual([expect.objectContaining({ first: "--help", rest: ["--help"] })]);
  });

  test("an optional value: bare, spaced, inline, and a negative number is a value", async () => {
    seen = [];
    await cli("leaf", "--wait");
    await cli("leaf", "--wait", "30");
    await cli("leaf", "--wait=2.5");
    await cli("leaf", "--wait", "--loud");
    await cli("leaf", "--wait", "-5");
    await cli("leaf", "--wait", "abc");
    expect(seen.map((entry) => (entry as { wait: unknown }).wait)).toEqual(["", "30", "2.5", "", "-5", "abc"]);
  });

  test("numbers, lists and switches reach the run as declared: read once, each left out as its type says", async () => {
    seen = [];
    await cli("typed");
    await cli("typed", "--hours", "1.5", "--wait", "--every", "3", "--tag", "x", "--tag", "y", "--quiet", "b");
    await cli("typed", "--wait", "30");
    expect(seen).toEqual([
      { hours: 2, wait: undefined, every: undefined, tags: [], quiet: false, kind: undefined },
      { hours: 1.5, wait: null, every: 3, tags: ["x", "y"], quiet: true, kind: "b" },
      { hours: 2, wait: 30, every: undefined, tags: [], quiet: false, kind: undefined },
    ]);
    expect(await cli("typed", "--hours", "soon")).toMatchObject({
      code: 1,
      stderr: "error: --hours takes a number of hours, not 'soon'\n",
    });
    expect((await cli("typed", "--every", "0")).stderr).toBe("error: --every takes a positive number of seconds, not '0'\n");
    expect(seen).toHaveLength(3);
  });

  test("--help and -h print help on stdout with exit 0 and run nothing", async () => {
    seen = [];
    for (const argv of [
      ["leaf", "--help"],
      ["leaf", "one", "-h"],
      ["leaf", "--bogus", "--help"],
      ["group", "leaf", "-h"],
    ]) {
      const run = await cli(...argv);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
      expect(run.stdout).toStartWith("A command with every kind of argument\n\nUsage: agentmail ");
    }
    expect(seen).toEqual([]);
  });

  test("a value that looks like a negated flag is still the value (citty alone drops --no-… tokens)", async () => {
    seen = [];
    expect((await cli("leaf", "--count", "--no-limit", "-c", "--no-way")).code).toBe(7);
    await cli("leaf", "--colour", "--no-colour", "-l");
    expect(seen).toEqual([expect.objectContaining({ count: "--no-way" }), expect.objectContaining({ colour: "--no-colour", loud: true })]);
  });

  test("-h given as a flag's value is that value, not a request for help", async () => {
    seen = [];
    expect((await cli("leaf", "--count", "-h")).code).toBe(7);
    expect(seen).toEqual([expect.objectContaining({ count: "-h" })]);
  });

  test("help shows usage, arguments, options with their defaults, and examples", async () => {
    const { stdout } = await cli("leaf", "--help");
    expect(stdout).toContain("Usage: agentmail leaf [first] [options]\n");
    expect(stdout).toContain("  -c, --count <n>         How many (default: 3)\n");
    expect(stdout).toContain("      --wait [seconds]    An optional value\n");
    expect(stdout).toContain("      --mode <fast|slow>  One of two\n");
    expect(stdout).toContain("Examples:\n  agentmail leaf one --count 2\n");
    expect((await cli("group", "needy", "--help")).stdout).toContain("Usage: agentmail group needy <red|blue> [options]\n");
  });

  test("--json with --help prints the help as one JSON document", async () => {
    const run = await cli("leaf", "--help", "--json");
    expect(run.code).toBe(0);
    const help = JSON.parse(run.stdout);
    expect(help).toMatchObject({
      command: "agentmail leaf",
      usage: "agentmail leaf [first] [options]",
      examples: ["agentmail leaf one --count 2"],
    });
    expect(help.options).toContainEqual({ name: "--count", short: "-c", value: "n", default: "3", description: "How many" });
    expect(help.options).toContainEqual({ name: "--wait", value: "seconds", value_optional: true, description: "An optional value" });
    expect(help.arguments).toEqual([{ name: "first", description: "A word", required: false }]);
  });

  test("a group without a run prints its help, exit 0; with --json as one JSON document", async () => {
    const text = await cli("group");
    expect({ code: text.code, stderr: text.stderr }).toEqual({ code: 0, stderr: "" });
    expect(text.stdout).toContain(
      "Commands:\n  leaf   A command with every kind of argument\n  needy  A required positional with options\n",
    );
    const json = await cli("group", "--json");
    expect(JSON.parse(json.stdout)).toMatchObject({ command: "agentmail group", commands: [{ name: "leaf" }, { name: "needy" }] });
  });

  test("the root: bare, --help and --json print help; --version and -v the version, as JSON with --json", async () => {
    expect((await cli()).stdout).toStartWith("Test tree (v9.8.7)\n\nUsage: agentmail <command> [options]\n");
    expect((await cli("--help")).stdout).toStartWith("Test tree (v9.8.7)\n");
    expect(JSON.parse((await cli("--json")).stdout)).toMatchObject({ command: "agentmail", version: "9.8.7", commands: expect.any(Array) });
    expect(await cli("--version")).toEqual({ code: 0, stdout: "9.8.7\n", stderr: "" });
    expect(await cli("-v")).toEqual({ code: 0, stdout: "9.8.7\n", stderr: "" });
    expect(await cli("--version", "--json")).toEqual({
      code: 0,
      stdout: '{"version":"9.8.7","commit":null,"built_at":null}\n',
      stderr: "",
    });
  });

  test("a built tree's --version says the commit (12 digits, -dirty kept) and the build time; --json has them whole", async () => {
    const build = { commit: "0123456789abcdef0123456789abcdef01234567-dirty", builtAt: "2026-11-29T10:00:00Z" };
    const built = defineCommand({ ...tree, meta: { ...tree.meta, build } });
    const run = (...argv: string[]) => runInProcess(argv, { tree: built });
    const line = "9.8.7 (commit 0123456789ab-dirty, built 2026-11-29T10:00:00Z)\n";
    expect(await run("--version")).toEqual({ code: 0, stdout: line, stderr: "" });
    expect((await run("-v", "--json")).stdout).toBe(
      '{"version":"9.8.7","commit":"0123456789abcdef0123456789abcdef01234567-dirty","built_at":"2026-11-29T10:00:00Z"}\n',
    );
    expect(versionIn(line)).toBe("9.8.7");
  });

  test("--json and --help may come before the command's name", async () => {
    seen = [];
    expect((await cli("--json", "leaf", "one")).code).toBe(7);
    expect(seen).toEqual([expect.objectContaining({ first: "one", json: true })]);
    expect((await cli("--help", "group", "leaf")).stdout).toContain("Usage: agentmail group leaf");
  });

  test("only the command reached runs: a parent's own run does not follow its subcommand", async () => {
    seen = [];
    await cli("parent", "child");
    await cli("parent", "--quick");
    expect(seen).toEqual(["child", "parent"]);
  });

  test("unknown commands: exit 1, one error line, the closest command or option suggested when close enough", async () => {
    expect(await cli("laef")).toEqual({
      code: 1,
      stdout: "",
      stderr: "error: unknown command 'laef'; did you mean 'leaf'? Run 'agentmail --help' to see the commands\n",
    });
    expect((await cli("version")).stderr).toBe(
      "error: unknown command 'version'; did you mean '--version'? Run 'agentmail --help' to see the commands\n",
    );
    expect((await cli("zzzzzz")).stderr).toBe("error: unknown command 'zzzzzz'; run 'agentmail --help' to see the commands\n");
    expect((await cli("group", "laef")).stderr).toBe(
      "error: unknown command 'laef' for 'agentmail group'; did you mean 'leaf'? Run 'agentmail group --help' to see the commands\n",
    );
    expect((await cli("parent", "restart")).stderr).toBe(
      "error: unknown command 'restart' for 'agentmail parent'; run 'agentmail parent --help' to see the commands\n",
    );
    expect((await cli("group", "laef", "--help")).code).toBe(1);
    expect((await cli("--bogus", "leaf")).stderr).toStartWith("error: unknown option '--bogus' for 'agentmail'");
    expect((await cli("--version", "leaf")).stderr).toBe(
      "error: unexpected argument 'leaf' for 'agentmail'; name the command first: 'agentmail leaf …'\n",
    );
    expect((await cli("--", "leaf")).code).toBe(1);
  });

  test("unknown options: exit 1 with the closest option suggested", async () => {
    expect((await cli("leaf", "--cuont", "2")).stderr).toBe(
      "error: unknown option '--cuont' for 'agentmail leaf'; did you mean '--count'? Run 'agentmail leaf --help' to see its options\n",
    );
    expect((await cli("leaf", "-z")).stderr).toBe(
      "error: unknown option '-z' for 'agentmail leaf'; run 'agentmail leaf --help' to see its options\n",
    );
    expect((await cli("--bogus")).code).toBe(1);
    expect((await cli("leaf", "--no-loud")).stderr).toContain("unknown option '--no-loud'");
  });

  test("a word that starts with a dash but reads as text is never taken apart into options: the -- that makes it text", async () => {
    seen = [];
    const hint = "to give text that starts with '-', put -- before it";
    const cases: [string[], string][] = [
      [["leaf", "-x is broken"], `error: '-x is broken' is not an option of 'agentmail leaf'; ${hint}: agentmail leaf -- '-x is broken'\n`],
      // -h inside text asked for help, -lc… set options: neither may happen to a message.
      [["leaf", "-hi there"], `error: '-hi there' is not an option of 'agentmail leaf'; ${hint}: agentmail leaf -- '-hi there'\n`],
      [["leaf", "--loud", "-lc 5"], `error: '-lc 5' is not an option of 'agentmail leaf'; ${hint}: agentmail leaf --loud -- '-lc 5'\n`],
      [["leaf", "- item"], `error: '- item' is not an option of 'agentmail leaf'; ${hint}: agentmail leaf -- '- item'\n`],
      [["leaf", "-5"], `error: '-5' is not an option of 'agentmail leaf'; ${hint}: agentmail leaf -- -5\n`],
      [["leaf", "--it is"], `error: '--it is' is not an option of 'agentmail leaf'; ${hint}: agentmail leaf -- '--it is'\n`],
      [["leaf", "-x y", "--loud"], `error: '-x y' is not an option of 'agentmail leaf'; ${hint}, after every option\n`],
      // A command that takes no text has no -- to offer.
      [["parent", "-x y"], "error: '-x y' is not an option of 'agentmail parent'; run 'agentmail parent --help' to see its options\n"],
    ];
    for (const [argv, stderr] of cases) expect(await cli(...argv)).toEqual({ code: 1, stdout: "", stderr });
    expect(seen).toEqual([]);
    // As an option's value, after --, or as a long option's value, the same text is taken as it is.
    await cli("leaf", "--colour", "-hi there");
    await cli("leaf", "--", "-x is broken");
    await cli("leaf", "--colour=hi there");
    expect(seen).toEqual([
      expect.objectContaining({ colour: "-hi there" }),
      expect.objectContaining({ first: "-x is broken" }),
      expect.objectContaining({ colour: "hi there" }),
    ]);
  });

  test("wrong values: a value on a switch, a missing value, a value not among the options, a surplus argument", async () => {
    const cases: [string[], string][] = [
      [["leaf", "--loud=yes"], "error: option '--loud' takes no value; run 'agentmail leaf --help'\n"],
      [["leaf", "--count"], "error: option '--count' needs a value (n); run 'agentmail leaf --help'\n"],
      [
        ["leaf", "--mode", "fats"],
        "error: option '--mode' takes one of fast, slow, not 'fats'; did you mean 'fast'? Run 'agentmail leaf --help'\n",
      ],
      [["leaf", "one", "two"], "error: unexpected argument 'two' for 'agentmail leaf'; run 'agentmail leaf --help'\n"],
      [["group", "needy"], "error: missing kind; usage: agentmail group needy <red|blue> [options]\n"],
      [["group", "needy", "green"], "error: kind takes one of red, blue, not 'green'; run 'agentmail group needy --help'\n"],
    ];
    for (const [argv, stderr] of cases) expect(await cli(...argv)).toEqual({ code: 1, stdout: "", stderr });
  });

  test("errors quote what was typed on one line", async () => {
    expect((await cli("leaf", "a", "b\nc")).stderr).toBe(
      "error: unexpected argument 'b\\nc' for 'agentmail leaf'; run 'agentmail leaf --help'\n",
    );
  });

  test("a failure carries its exit code; with --json it is one JSON document on stdout and nothing on stderr", async () => {
    expect(await cli("failing")).toEqual({ code: 2, stdout: "", stderr: "error: not inside tmux; run agentmail in a tmux window\n" });
    expect(await cli("failing", "--json")).toEqual({
      code: 2,
      stdout: '{"error":{"code":"not_in_tmux","message":"not inside tmux; run agentmail in a tmux window"}}\n',
      stderr: "",
    });
    const usage = await cli("leaf", "--bogus", "--json");
    expect(JSON.parse(usage.stdout)).toEqual({ error: { code: "usage", message: expect.stringContaining("'--bogus'") } });
    expect(usage.stderr).toBe("");
    const crash = await cli("crashing");
    expect(crash.code).toBe(1);
    expect(crash.stderr).toBe("error: boom; this is a bug in agentmail, please report it\n");
  });
});

describe("the tokenizer", () => {
  test("splits as node:util's parseArgs does: clusters, attached values, a dash-led value, a lone dash, --", () => {
    const takesValue = (name: string) => name === "-m" || name === "--message";
    expect(tokenize(["-ab", "-mhello", "--message=x=y", "--flag", "-", "-m", "-x", "--", "-z"], takesValue)).toEqual([
      { kind: "option", rawName: "-a", value: undefined },
      { kind: "option", rawName: "-b", value: undefined },
      { kind: "option", rawName: "-m", value: "hello" },
      { kind: "option", rawName: "--message", value: "x=y" },
      { kind: "option", rawName: "--flag", value: undefined },
      { kind: "positional", value: "-" },
      { kind: "option", rawName: "-m", value: "-x" },
      { kind: "positional", value: "-z" },
    ]);
    expect(tokenize(["--message"], takesValue)).toEqual([{ kind: "option", rawName: "--message", value: undefined }]);
    expect(tokenize(["-m", "-a b", "-a b", "-1", "--x y=z", "--message=a b"], takesValue)).toEqual([
      { kind: "option", rawName: "-m", value: "-a b" },
      { kind: "dashed text", value: "-a b" },
      { kind: "dashed text", value: "-1" },
      { kind: "dashed text", value: "--x y=z" },
      { kind: "option", rawName: "--message", value: "a b" },
    ]);
  });
});

describe("numeric flags", () => {
  test("plain decimals, zero unless positive", () => {
    expect(numberArg("--wait", "30", "seconds")).toBe(30);
    expect(numberArg("--wait", " 2.5 ", "seconds")).toBe(2.5);
    expect(numberArg("--wait", "0", "seconds")).toBe(0);
    expect(numberArg("--sweep", ".5", "seconds", { positive: true })).toBe(0.5);
  });

  test("anything else says what the flag takes and what it got", () => {
    expect(() => numberArg("--wait", "abc", "seconds")).toThrow("--wait takes a number of seconds, not 'abc'");
    expect(() => numberArg("--wait", "", "seconds")).toThrow("--wait takes a number of seconds, not ''");
    expect(() => numberArg("--wait", "1e3", "seconds")).toThrow("--wait takes a number of seconds, not '1e3'");
    expect(() => numberArg("--wait", "-5", "seconds")).toThrow("--wait takes a non-negative number of seconds, not '-5'");
    expect(() => numberArg("--read-hours", "-1", "hours")).toThrow("--read-hours takes a non-negative number of hours, not '-1'");
    expect(() => numberArg("--interval", "0", "seconds", { positive: true })).toThrow(
      "--interval takes a positive number of seconds, not '0'",
    );
  });
});

describe("agentmail's own commands, outside tmux", () => {
  test("--help on the root lists every command; --version prints the package version (from source: nothing more)", async () => {
    const help = await runInProcess(["--help"]);
    expect(help.code).toBe(0);
    for (const command of ["send", "receive", "recipients", "status", "onboard", "cleanup", "mailman", "mcp", "hooks"]) {
      expect(help.stdout).toContain(`\n  ${command} `);
    }
    const packageVersion = JSON.parse(readFileSync(join(import.meta.dir, "..", "..", "..", "package.json"), "utf8")).version;
    expect((await runInProcess(["--version"])).stdout).toBe(`${packageVersion}\n`);
  });

  test("wrong hints are gone: receive --wait abc and -5, mailman restart, version", async () => {
    expect((await runInProcess(["receive", "--wait", "abc"])).stderr).toBe("error: --wait takes a number of seconds, not 'abc'\n");
    expect((await runInProcess(["receive", "--wait", "-5"])).stderr).toBe(
      "error: --wait takes a non-negative number of seconds, not '-5'\n",
    );
    const restart = await runInProcess(["mailman", "restart"]);
    expect(restart.code).toBe(1);
    expect(restart.stderr).toBe(
      "error: unknown command 'restart' for 'agentmail mailman'; run 'agentmail mailman --help' to see the commands\n",
    );
    expect((await runInProcess(["version"])).stderr).toBe(
      "error: unknown command 'version'; did you mean '--version'? Run 'agentmail --help' to see the commands\n",
    );
  });

  test("numeric flags of cleanup and mailman go through the one parser, defaults included", async () => {
    expect((await runInProcess(["cleanup", "--read-hours", "soon"])).stderr).toBe(
      "error: --read-hours takes a number of hours, not 'soon'\n",
    );
    expect((await runInProcess(["cleanup", "--stale-hours=-3"])).stderr).toBe(
      "error: --stale-hours takes a non-negative number of hours, not '-3'\n",
    );
    expect((await runInProcess(["mailman", "--interval", "0"])).stderr).toBe(
      "error: --interval takes a positive number of seconds, not '0'\n",
    );
    expect((await runInProcess(["mailman", "--sweep", "x"])).stderr).toBe("error: --sweep takes a number of seconds, not 'x'\n");
  });

  test("bare groups print their help with exit 0", async () => {
    const hooks = await runInProcess(["hooks"]);
    expect({ code: hooks.code, stderr: hooks.stderr }).toEqual({ code: 0, stderr: "" });
    expect(hooks.stdout).toContain("Usage: agentmail hooks <command> [options]");
    expect(JSON.parse((await runInProcess(["hooks", "--json"])).stdout).commands.map((c: { name: string }) => c.name)).toEqual([
      "install",
      "uninstall",
    ]);
  });
});
