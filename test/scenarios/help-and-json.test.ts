/** --help and --json on every command of the compiled binary: help on stdout with exit 0, exactly one JSON document. */
import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { tempRepo } from "../support/repo.ts";
import { outsideTmuxEnv } from "../support/tmux-server.ts";
import { am, expectError, expectJsonError, oneJson, storedMessages, sharedSession } from "../support/workflow.ts";

const COMMANDS: string[][] = [
  ["send"],
  ["receive"],
  ["recipients"],
  ["status"],
  ["onboard"],
  ["cleanup"],
  ["mailman"],
  ["mailman", "stop"],
  ["mailman", "status"],
];

const session = sharedSession();
const { inRepo } = session;
let repo: ReturnType<typeof tempRepo>, alice: Record<string, string>;
beforeAll(() => ({ repo, alice } = session));

const bobsMailbox = () => join(repo.mailDir, "bob.jsonl");

describe("--help on every command", () => {
  for (const path of COMMANDS) {
    test(`agentmail ${path.join(" ")} --help: usage on stdout, exit 0, in and outside tmux`, async () => {
      for (const env of [alice, outsideTmuxEnv()]) {
        const result = await am([...path, "--help"], inRepo(env));
        expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
        expect(result.stdout).toContain(`agentmail ${path.join(" ")}`);
        expect(result.stdout.length).toBeGreaterThan(20);
      }
    });
  }

  test("--help documents the workflow flags", async () => {
    const flags: Record<string, string[]> = {
      send: ["-r", "--recipient", "-m", "--message", "--json"],
      receive: ["--wait", "--hook", "--json"],
      cleanup: ["--stale-hours", "--read-hours", "--dry-run", "--json"],
      mailman: ["--daemon", "--interval", "--sweep", "stop", "status"],
    };
    for (const [command, expected] of Object.entries(flags)) {
      const result = await am([command, "--help"], inRepo(alice));
      for (const flag of expected) expect(result.stdout).toContain(flag);
    }
  });

  test("--help runs nothing: no mail sent, no status set, no mailman started", async () => {
    expect((await am(["send", "bob", "not sent", "--help"], inRepo(alice))).code).toBe(0);
    expect((await am(["status", "work", "--help"], inRepo(alice))).code).toBe(0);
    expect((await am(["mailman", "--daemon", "--help"], inRepo(alice))).code).toBe(0);
    expect(storedMessages(bobsMailbox()).filter((m) => m.message === "not sent")).toEqual([]);
    expect((await am(["status"], inRepo(alice))).stdout).not.toMatch(/^work/);
    const status = oneJson(await am(["mailman", "status", "--json"], inRepo(alice))) as { running: boolean };
    expect(status.running).toBe(false);
  });
});

describe("--json on every command: exactly one JSON document on stdout", () => {
  const successes: [string, string[], Record<string, string> | "outside"][] = [
    ["send", ["send", "bob", "json hello", "--json"], {}],
    ["receive", ["receive", "--json"], {}],
    ["recipients", ["recipients", "--json"], {}],
    ["status (show)", ["status", "--json"], {}],
    ["status ready", ["status", "ready", "--json"], {}],
    ["onboard", ["onboard", "--json"], {}],
    ["onboard outside tmux", ["onboard", "--json"], "outside"],
    ["cleanup --dry-run", ["cleanup", "--dry-run", "--json"], {}],
    ["cleanup outside tmux", ["cleanup", "--dry-run", "--json"], "outside"],
    ["mailman status", ["mailman", "status", "--json"], {}],
    ["mailman stop (none running)", ["mailman", "stop", "--json"], {}],
    ["status ready outside tmux", ["status", "ready", "--json"], "outside"],
  ];
  for (const [label, args, where] of successes) {
    test(`${label}: exit 0`, async () => {
      const result = await am(args, inRepo(where === "outside" ? outsideTmuxEnv() : alice));
      expect(result.code).toBe(0);
      // A warning on stderr is allowed (cleanup outside tmux says it could not ask tmux); an error is not.
      expect(result.stderr).not.toContain("error");
      oneJson(result);
    });
  }

  const failures: [string, string[], Record<string, string> | "outside", number][] = [
    ["send to nobody", ["send", "nobody", "x", "--json"], {}, 1],
    ["send outside tmux", ["send", "bob", "x", "--json"], "outside", 2],
    ["receive outside tmux", ["receive", "--json"], "outside", 2],
    ["receive --wait=abc", ["receive", "--wait=abc", "--json"], {}, 1],
    ["recipients outside tmux", ["recipients", "--json"], "outside", 2],
    ["recipients with a surplus argument", ["recipients", "extra", "--json"], {}, 1],
    ["status bogus", ["status", "bogus", "--json"], {}, 1],
    ["status (show) outside tmux", ["status", "--json"], "outside", 2],
    ["onboard with an unknown flag", ["onboard", "--bogus", "--json"], {}, 1],
    ["cleanup --read-hours -1", ["cleanup", "--read-hours", "-1", "--json"], {}, 1],
    ["cleanup --stale-hours x", ["cleanup", "--stale-hours", "x", "--json"], {}, 1],
    ["mailman --interval 0", ["mailman", "--interval", "0", "--json"], {}, 1],
    ["mailman --sweep x", ["mailman", "--daemon", "--sweep", "x", "--json"], {}, 1],
    ["mailman stop with an unknown flag", ["mailman", "stop", "--bogus", "--json"], {}, 1],
    ["mailman status with an unknown flag", ["mailman", "status", "--bogus", "--json"], {}, 1],
  ];
  for (const [label, args, where, code] of failures) {
    test(`${label}: {"error":{code,message}} with exit ${code}`, async () => {
      const result = await am(args, inRepo(where === "outside" ? outsideTmuxEnv() : alice));
      expectJsonError(result, code);
    });
  }

  test("without --json the same failures are one error: line on stderr", async () => {
    expectError(await am(["status", "bogus"], inRepo(alice)), 1);
    expectError(await am(["cleanup", "--read-hours", "-1"], inRepo(alice)), 1);
    expectError(await am(["mailman", "--interval", "0"], inRepo(alice)), 1);
    expectError(await am(["recipients"], inRepo(outsideTmuxEnv())), 2);
  });
});
