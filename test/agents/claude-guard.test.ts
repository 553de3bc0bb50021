/**
 * The pre-edit guard in a real Claude Code, headless against the mock model, installed by `agentmail hooks install
 * claude --project`: the model's Write to a file another agent claimed is refused before it runs, and the refusal
 * (who holds the file, why, how to ask) is the tool result the model reads next; a Write to an unclaimed file goes
 * through. `--permission-mode acceptEdits` stands for a user who lets Claude edit: the guard is what stops it.
 */
import { afterEach, beforeEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { storedMessages } from "../support/e2e.ts";
import { claudeEnv, succeeded } from "./claude-env.ts";
import { ensureAgent } from "./install-agents.ts";
import { SENDER, World } from "./world.ts";

setDefaultTimeout(240_000);

/** The last tool result the model was sent in a request: its text and whether it is an error. */
function lastToolResult(body: any): { text: string; is_error: boolean } {
  const results = (body?.messages ?? []).flatMap((message: any) =>
    Array.isArray(message.content) ? message.content.filter((block: any) => block.type === "tool_result") : [],
  );
  const last = results.at(-1);
  const content = last?.content;
  const text = typeof content === "string" ? content : Array.isArray(content) ? content.map((part: any) => part.text ?? "").join("") : "";
  return { text, is_error: last?.is_error === true };
}

describe("claude: the pre-edit guard of hooks install claude, against the mock model", () => {
  let world: World;

  beforeEach(() => {
    world = new World();
  });

  afterEach(() => world.stop());

  test("a Write to a file another agent claimed is refused and the model is told who holds it; a Write to an unclaimed file goes through", async () => {
    const claude = ensureAgent("claude").binary;
    const claimed = await world.agentmail(["claim", "src/parser.ts", "--reason", "rewriting the parser"], SENDER);
    expect({ code: claimed.code, stderr: claimed.stderr }).toEqual({ code: 0, stderr: "" });
    const env = claudeEnv(world);
    const install = await world.agentmail(["hooks", "install", "claude", "--project"]);
    expect({ code: install.code, stderr: install.stderr }).toEqual({ code: 0, stderr: "" });
    const owned = join(world.repo.dir, "src", "parser.ts");
    const free = join(world.repo.dir, "free.md");
    world.mock.script(
      { tool: "Write", input: { file_path: owned, content: "export const mine = 1;\n" } },
      { tool: "Write", input: { file_path: free, content: "nobody claimed this\n" } },
      { text: "Done." },
    );
    const run = await world.run(
      [
        claude,
        "-p",
        "Write the two files.",
        "--output-format",
        "stream-json",
        "--verbose",
        "--allowedTools",
        "mcp__agentmail",
        "--permission-mode",
        "acceptEdits",
      ],
      env,
    );
    const diagnosis = `exit ${run.code}\nstderr: ${run.stderr.slice(-3000)}\nstdout: ${run.stdout.slice(-3000)}`;
    expect(world.mock.errors, diagnosis).toEqual([]);
    expect({ code: run.code, timedOut: run.timedOut }, diagnosis).toEqual({ code: 0, timedOut: false });
    expect(succeeded(run), diagnosis).toBe(true);

    const [, afterRefusal, afterWrite] = world.mock.conversation;
    const refusal = lastToolResult(afterRefusal?.body);
    expect(refusal.is_error, "the refused Write's result should be an error").toBe(true);
    // 2.1.332 puts "PreToolUse:Write hook error: " before the guard's reason.
    expect(refusal.text).toContain(
      'agentmail: src/parser.ts is claimed by sender: src/parser.ts (exclusive, sender, "rewriting the parser", until ',
    );
    expect(refusal.text).toContain("Ask sender to release it (agentmail send sender");
    expect(existsSync(owned), "the claimed file must not have been written").toBe(false);
    const written = lastToolResult(afterWrite?.body);
    expect({ is_error: written.is_error, text: written.text }).toEqual({
      is_error: false,
      text: expect.stringContaining("File created successfully"),
    });
    expect(readFileSync(free, "utf8")).toBe("nobody claimed this\n");
    // The holder was told who asked; the guard ran for both Writes.
    const toHolder = storedMessages(join(world.repo.mailDir, `${SENDER}.jsonl`)).map((message) => [message.from, message.subject]);
    expect(toHolder).toEqual([["agentmail", "claim wanted: src/parser.ts"]]);
    expect(world.calls().filter((call) => call.args === "guard claude")).toEqual([
      { args: "guard claude", exit: 0 },
      { args: "guard claude", exit: 0 },
    ]);
  });
});
