/**
 * The README's tutorial, run as written: every `$ agentmail …` line of its examples, in the window its comment names
 * (`# in window alice`, `# bob`; `# anyone` runs in alice's), by a shell whose PATH finds the agentmail under test.
 * Each example starts from an empty store in a private tmux server with the tutorial's windows (alice, reviewer, one
 * tmux names itself, bob). What each command prints must be what the README shows, but for what differs by run: ids
 * (the README's are mapped to the real ones in the order they appear, and commands use the real ones), ages and times.
 */
import { expect } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { tempRepo } from "./repo.ts";
import { TmuxServer } from "./tmux-server.ts";
import { waitFor } from "./wait.ts";

interface Step {
  command: string;
  window: string;
  expected: string;
}

const ID = /\b[A-Za-z0-9]{8}\b/g;
const TIME = /\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\b/g;
const AGE = /\b\d+[smhd]\b/g;

/** The examples of the README's tutorial section, each the `$` lines of one code block with the output under them. */
export function tutorialExamples(readme = join(import.meta.dir, "..", "..", "README.md")): Step[][] {
  const text = readFileSync(readme, "utf8");
  const section = text.slice(text.indexOf("\n## Tutorial"), text.indexOf("\n## ", text.indexOf("\n## Tutorial") + 1));
  const examples: Step[][] = [];
  let steps: Step[] | null = null;
  for (const line of section.split("\n")) {
    if (line.startsWith("```")) {
      if (steps === null) steps = [];
      else {
        if (steps.length > 0) examples.push(steps);
        steps = null;
      }
      continue;
    }
    if (steps === null) continue;
    const command = /^\$ (agentmail .*?)\s+# (?:in window )?(\S+)$/.exec(line);
    if (command) steps.push({ command: command[1]!, window: command[2] === "anyone" ? "alice" : command[2]!, expected: "" });
    else if (steps.length > 0) steps.at(-1)!.expected += `${line}\n`;
  }
  return examples;
}

/** Ages and times as `<age>` and `<time>`, runs of spaces as one (columns are as wide as what is in them). */
const normalized = (text: string) => text.replace(TIME, "<time>").replace(AGE, "<age>").replace(/ {2,}/g, "  ");

/**
 * Runs every example with `path` first on PATH (where the agentmail under test is) and checks each output; returns
 * how many commands ran. The tmux server is started and stopped here.
 */
export async function runTutorial(repo: ReturnType<typeof tempRepo>, path: string, env: Record<string, string> = {}): Promise<number> {
  const shellEnv = { ...env, PATH: `${path}:${process.env.PATH}` };
  const found = Bun.spawnSync(["sh", "-c", "command -v agentmail"], { env: shellEnv }).stdout.toString().trim();
  expect(found, "the agentmail the tutorial runs").toBe(join(path, "agentmail"));
  const server = TmuxServer.start(["alice", "reviewer"], repo.dir);
  let ran = 0;
  try {
    const unnamed = server.addUnnamedWindow(repo.dir);
    // tmux names the window after its program once the program runs: until bash has started it is "tmux".
    await waitFor(
      "the unnamed window to be named after bash",
      () => server.run(["display-message", "-p", "-t", unnamed.windowId, "#{window_name}"]).trim() === "bash",
    );
    server.addWindow("bob", repo.dir);
    for (const example of tutorialExamples()) {
      rmSync(repo.mailDir, { recursive: true, force: true });
      const ids = new Map<string, string>();
      for (const step of example) {
        const command = step.command.replace(ID, (id) => ids.get(id) ?? id);
        const result = Bun.spawnSync(["sh", "-c", command], {
          cwd: repo.dir,
          env: { ...server.agent(step.window).env, ...shellEnv },
          stdin: "ignore",
        });
        const stdout = result.stdout.toString();
        expect({ command, code: result.exitCode, stderr: result.stderr.toString() }).toEqual({ command, code: 0, stderr: "" });
        const seen = stdout.match(ID) ?? [];
        for (const [index, id] of (step.expected.match(ID) ?? []).entries()) if (!ids.has(id) && seen[index]) ids.set(id, seen[index]!);
        const expected = step.expected.replace(ID, (id) => ids.get(id) ?? id);
        expect({ command, stdout: normalized(stdout) }).toEqual({ command, stdout: normalized(expected) });
        ran++;
      }
    }
  } finally {
    server.stop();
  }
  return ran;
}
