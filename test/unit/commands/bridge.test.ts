/**
 * The `bridge` commands and bridge addresses for `send`, run in process through the dispatcher (so coverage counts
 * them): their text and --json output, their errors, `bridge run` stopped by a signal, and `send feat124:…`,
 * `send roo:…`, `send dmail:…` from a pane of a private tmux server.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { exportedLine, importedLine, leftLine, summaryLine } from "../../../src/bridges/sync.ts";
import { runInProcess } from "../../support/in-process.ts";
import { bridgeWorld, feat124Text, fixture, HOSTILE_YAML, hostileText, type BridgeWorld } from "../../support/bridges.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/workflow.ts";

let world: BridgeWorld;
beforeEach(async () => {
  world = await bridgeWorld();
});
afterEach(() => world.remove());

const run = (argv: string[], env: Record<string, string> = {}) =>
  runInProcess(argv, { cwd: world.dir, env: { ...world.place.env, ...env } });

describe("bridge list, add, remove", () => {
  test("list: one line per bridge, or a JSON array", async () => {
    const text = await run(["bridge", "list"]);
    expect(text).toEqual({
      code: 0,
      stdout: `feat124 feat124 ${world.mail}\nroo roo ${world.roo}\npaintress dmail ${world.tool} to=alice\n`,
      stderr: "",
    });
    const json = JSON.parse((await run(["bridge", "list", "--json"])).stdout);
    expect(json[2]).toEqual({ name: "paintress", kind: "dmail", dir: world.tool, label: "tool", routes: {}, to: "alice" });
  });

  test("add with repeated --route; remove; list when none is left", async () => {
    const routes = ["--route", "report=alice", "--route", "feedback=bob"];
    const added = await run(["bridge", "add", "dmail", "sightjack", "--dir", "tool", ...routes, "--to", "bob", "--json"]);
    expect(JSON.parse(added.stdout)).toMatchObject({ name: "sightjack", routes: { report: "alice", feedback: "bob" }, to: "bob" });
    expect((await run(["bridge", "list"])).stdout).toContain(`sightjack dmail ${world.tool} report=alice feedback=bob to=bob\n`);
    for (const name of ["sightjack", "paintress", "roo"]) expect((await run(["bridge", "remove", name])).stdout).toBe(`removed ${name}\n`);
    expect(JSON.parse((await run(["bridge", "remove", "feat124", "--json"])).stdout)).toEqual({ removed: "feat124" });
    expect((await run(["bridge", "list"])).stdout).toBe("No bridges; add one with 'agentmail bridge add feat124|roo|dmail|claude-team'\n");
    expect((await run(["bridge", "add", "feat124"])).stdout).toBe(`feat124 ${world.mail}\n`);
  });

  test("errors are one line that says what to do, or one JSON document with --json", async () => {
    expect(await run(["bridge", "add"])).toMatchObject({ code: 1, stdout: "", stderr: expect.stringContaining("missing kind") });
    expect(await run(["bridge", "remove"])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("missing name; usage: agentmail bridge remove <name> [options]; 'agentmail bridge list' shows them"),
    });
    expect((await run(["bridge", "add", "fet124"])).stderr).toContain(
      "kind takes one of feat124, roo, dmail, claude-team, not 'fet124'; did you mean 'feat124'?",
    );
    const json = await run(["bridge", "remove", "nothing", "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).error.code).toBe("not_found");
    const sweep = await run(["bridge", "run", "--sweep", "0"]);
    expect(sweep).toMatchObject({ code: 1, stderr: expect.stringContaining("--sweep takes a positive number") });
    expect(await run(["bridge"])).toMatchObject({ code: 0, stdout: expect.stringContaining("Commands:") });
    expect((await run(["bridge", "add", "--help"])).stdout).toContain("--route <kind=recipient>");
  });

  test("add dmail refuses a recipient an import could not reach, and adds nothing", async () => {
    const add = (...recipient: string[]) => run(["bridge", "add", "dmail", "sightjack", "--dir", "tool", ...recipient]);
    expect(await add("--to", "alice,bob")).toMatchObject({
      code: 1,
      stdout: "",
      stderr:
        "error: --to alice,bob: 'alice,bob' is a list; give one recipient: an agent's name, @GROUP or role:ROLE (a group reaches several)\n",
    });
    const unknown = await add("--route", "report=feat124:bob", "--to", "bobb", "--json");
    expect(JSON.parse(unknown.stdout).error).toMatchObject({
      code: "usage",
      message: expect.stringContaining("'feat124:bob' is a bridge address"),
    });
    expect((await add("--to", "bobb")).stderr).toBe(
      "error: --to bobb: no agent of this store is named 'bobb' (did you mean 'bob'?); " +
        "an agent is known once it has mail or has registered ('agentmail status' in its window, or its hooks)\n",
    );
    expect((await run(["bridge", "list"])).stdout).not.toContain("sightjack");
  });
});

describe("bridge sync", () => {
  test("prints what was imported and left alone per bridge; --json gives counts and the files left alone", async () => {
    world.write(".mail/alice/2024-01-28T15-30-00_worker-bug-069_status.md", fixture("feat124-status.md"));
    world.write(".mail/alice/bad.md", "no frontmatter\n");
    world.write(".mail/orchestrator/x.md", fixture("feat124-status.md"));
    const text = await run(["bridge", "sync"]);
    expect(text.code).toBe(0);
    const [alice] = world.messages("alice");
    expect(text.stdout).toBe(
      [
        `imported feat124 .mail/alice/2024-01-28T15-30-00_worker-bug-069_status.md -> alice ${alice!.id}`,
        "left feat124 .mail/alice/bad.md: it does not start with a '---' frontmatter line",
        "feat124: 1 imported, 0 exported, 1 left alone, 1 for others",
        "roo: 0 imported, 0 exported, 0 left alone",
        "paintress: 0 imported, 0 exported, 0 left alone",
        "",
      ].join("\n"),
    );
    const json = JSON.parse((await run(["bridge", "sync", "--json"])).stdout);
    expect(json).toEqual({
      bridges: [
        {
          name: "feat124",
          kind: "feat124",
          imported: 0,
          exported: 0,
          queued: 0,
          others: 1,
          left: [{ file: ".mail/alice/bad.md", reason: "it does not start with a '---' frontmatter line" }],
        },
        { name: "roo", kind: "roo", imported: 0, exported: 0, queued: 0, others: 0, left: [] },
        { name: "paintress", kind: "dmail", imported: 0, exported: 0, queued: 0, others: 0, left: [] },
      ],
      deferred: 0,
    });
  });

  test("a file whose frontmatter the YAML library throws on is listed with its reason; the rest import and it exits 0", async () => {
    world.write(".mail/alice/a-loop.md", hostileText(HOSTILE_YAML["alias-loop"]!.yaml));
    world.write(".roo/mailbox/to-bob.md", hostileText(HOSTILE_YAML["unknown-alias"]!.yaml));
    world.write("tool/outbox/bomb.md", hostileText(HOSTILE_YAML["alias-bomb"]!.yaml));
    world.write(".mail/alice/b-good.md", feat124Text("w", "alice", "good"));
    const result = await run(["bridge", "sync"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const [good] = world.messages("alice");
    expect(result.stdout).toBe(
      [
        `imported feat124 .mail/alice/b-good.md -> alice ${good!.id}`,
        "left feat124 .mail/alice/a-loop.md: the frontmatter.x[0] is an alias to a list or map that holds it (a loop)",
        "feat124: 1 imported, 0 exported, 1 left alone",
        "left roo .roo/mailbox/to-bob.md: its frontmatter is not valid YAML (Unresolved alias (the anchor must be set before the alias): undefined)",
        "roo: 0 imported, 0 exported, 1 left alone",
        "left paintress tool/outbox/bomb.md: its frontmatter is not valid YAML (Excessive alias count indicates a resource exhaustion attack)",
        "paintress: 0 imported, 0 exported, 1 left alone",
        "",
      ].join("\n"),
    );
  });

  test("with no bridges it says how to add one", async () => {
    for (const name of ["feat124", "roo", "paintress"]) await run(["bridge", "remove", name]);
    expect((await run(["bridge", "sync"])).stdout).toBe("No bridges; add one with 'agentmail bridge add feat124|roo|dmail|claude-team'\n");
  });

  test("report lines escape control characters in file names and reasons", () => {
    const line = importedLine("feat124", { file: ".mail/a\nb.md", to: "x\ty", id: "Ab3dE5gH" });
    expect(line).toBe("imported feat124 .mail/a\\nb.md -> x\\ty Ab3dE5gH");
    expect(exportedLine("roo", { file: ".roo/mailbox/to-a.md", id: "Ab3dE5gH" })).toBe("exported roo .roo/mailbox/to-a.md Ab3dE5gH");
    expect(leftLine({ bridge: "roo", file: "f", reason: "r\u001b[31m" })).toBe("left roo f: r\\x1b[31m");
    expect(summaryLine({ name: "roo", kind: "roo", imported: [], exported: [], queued: 2, left: [], others: 3 })).toBe(
      "roo: 0 imported, 0 exported, 2 queued, 0 left alone, 3 for others",
    );
  });
});

describe("bridge run", () => {
  test("logs each import on stderr and stops on SIGTERM with its totals (--json)", async () => {
    world.write(".mail/bob/m.md", feat124Text("w", "bob", "imported by run"));
    const running = run(["bridge", "run", "--sweep", "0.2", "--json"]);
    await waitFor("bridge run to import .mail/bob/m.md", () => world.messages("bob").length > 0, 30_000, 25);
    process.kill(process.pid, "SIGTERM");
    const result = await running;
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ running: false, imported: 1 });
    expect(result.stderr).toMatch(/imported feat124 \.mail\/bob\/m\.md -> bob [A-Za-z0-9]{8}\n/);
  });
});

describe("send to bridge addresses from a tmux pane", () => {
  let server: TmuxServer;
  beforeAll(() => {
    server = TmuxServer.start(["alice"], "/tmp");
  });
  afterAll(() => server.stop());

  test("feat124:, roo: and dmail: print the id of the file written; a plain window name still means a window", async () => {
    const env = server.agent("alice").env;
    const feat = await run(["send", "feat124:wörker 8", "hello ☕"], env);
    expect(feat).toMatchObject({ code: 0, stderr: "" });
    const [file] = readdirSync(join(world.mail, "wörker 8"));
    expect(file).toMatch(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d_alice_message\.md$/);
    expect(readFileSync(join(world.mail, "wörker 8", file!), "utf8")).toEndWith("\n\nhello ☕\n");

    const roo = await run(["send", "roo:architect", "--json", "-m", "review ADR-004"], env);
    expect(readFileSync(join(world.roo, "to-architect.md"), "utf8")).toContain(`id: ${JSON.parse(roo.stdout).id}\n`);
    const dmail = await run(["send", "dmail:paintress", "Implement MY-42"], env);
    expect(existsSync(join(world.tool, "inbox", `specification-${dmail.stdout.trim()}.md`))).toBe(true);
    const hostile = await run(["send", "feat124:../x", "no"], env);
    expect(hostile).toMatchObject({ code: 1, stdout: "", stderr: expect.stringContaining("invalid FEAT-124 mailbox name") });
    expect(await run(["send", "feat124:x", "  "], env)).toMatchObject({ code: 1, stderr: expect.stringContaining("empty") });
    expect(await run(["send", "bob", "x"], env)).toMatchObject({ code: 1, stderr: expect.stringContaining('no window named "bob"') });
  });
});
