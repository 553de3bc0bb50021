/**
 * The pre-edit guard in a real Gemini CLI, headless against the mock model, installed by `agentmail hooks install
 * gemini --project` (a BeforeTool hook for write_file and replace): the model's write_file to a file another agent
 * claimed is blocked before it runs, and the function response the model reads next carries the guard's reason; a
 * write_file to an unclaimed file goes through. `--approval-mode yolo` stands for a user who lets Gemini write files.
 */
import { afterEach, beforeEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ensureAgent } from "./install-agents.ts";
import { SENDER, World } from "./world.ts";

setDefaultTimeout(240_000);

/** The text of the last function response in a request: what the model was told of its last tool call. */
function lastFunctionResponse(body: any): string {
  const parts = (body?.contents ?? []).flatMap((content: any) => content.parts ?? []);
  const responses = parts.filter((part: any) => part.functionResponse);
  return JSON.stringify(responses.at(-1)?.functionResponse ?? null);
}

describe("gemini: the pre-edit guard of hooks install gemini, against the mock model", () => {
  let world: World;

  beforeEach(() => {
    world = new World();
  });

  afterEach(() => world.stop());

  test("a write_file to a file another agent claimed is blocked and the model is told who holds it; an unclaimed one is written", async () => {
    const gemini = ensureAgent("gemini").binary;
    const claimed = await world.agentmail(["claim", "src/parser.ts", "--reason", "rewriting the parser"], SENDER);
    expect({ code: claimed.code, stderr: claimed.stderr }).toEqual({ code: 0, stderr: "" });
    world.writeHomeFile(".gemini/settings.json", JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }) + "\n");
    const install = await world.agentmail(["hooks", "install", "gemini", "--project"]);
    expect({ code: install.code, stderr: install.stderr }).toEqual({ code: 0, stderr: "" });
    const owned = join(world.repo.dir, "src", "parser.ts");
    const free = join(world.repo.dir, "free.md");
    world.mock.script(
      { tool: "write_file", input: { file_path: owned, content: "export const mine = 1;\n" } },
      { tool: "write_file", input: { file_path: free, content: "nobody claimed this\n" } },
      { text: "Done." },
    );
    const run = await world.run([gemini, "-p", "Write the two files.", "-o", "json", "--approval-mode", "yolo"], {
      GOOGLE_GEMINI_BASE_URL: world.mock.url,
      GEMINI_API_KEY: "dummy",
      GEMINI_CLI_NO_RELAUNCH: "true",
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    });
    const diagnosis = `exit ${run.code}\nstderr: ${run.stderr.slice(-3000)}\nstdout: ${run.stdout.slice(-3000)}`;
    expect(world.mock.errors, diagnosis).toEqual([]);
    expect({ code: run.code, timedOut: run.timedOut }, diagnosis).toEqual({ code: 0, timedOut: false });
    const [, afterRefusal, afterWrite] = world.mock.conversation;
    const refusal = lastFunctionResponse(afterRefusal?.body);
    expect(refusal, diagnosis).toContain("agentmail: src/parser.ts is claimed by sender: src/parser.ts (exclusive, sender,");
    expect(refusal).toContain("rewriting the parser");
    expect(existsSync(owned), "the claimed file must not have been written").toBe(false);
    expect(lastFunctionResponse(afterWrite?.body)).not.toContain("is claimed by");
    expect(readFileSync(free, "utf8")).toBe("nobody claimed this\n");
  });
});
