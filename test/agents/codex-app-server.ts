/** Asks Codex CLI itself which hooks it sees and whether it trusts them: `codex app-server`, method `hooks/list`. */
import { chunksOf } from "../support/byte-stream.ts";
import type { World } from "./world.ts";

export interface ListedHook {
  key: string;
  eventName: string;
  command: string;
  currentHash: string;
  trustStatus: "managed" | "untrusted" | "trusted" | "modified";
}

const ANSWER_TIMEOUT_MS = 60_000;

export async function codexHooksList(codex: string, world: World, env: Record<string, string>): Promise<ListedHook[]> {
  const child = Bun.spawn([codex, "app-server"], {
    cwd: world.repo.dir,
    env: world.env(undefined, env),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const send = (message: object) => {
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
    child.stdin.flush();
  };
  const guard = setTimeout(() => child.kill(9), ANSWER_TIMEOUT_MS);
  try {
    send({ id: 1, method: "initialize", params: { clientInfo: { name: "agentmail-tests", version: "1" } } });
    send({ method: "initialized" });
    send({ id: 2, method: "hooks/list", params: { cwds: [world.repo.dir] } });
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of chunksOf(child.stdout)) {
      buffered += decoder.decode(chunk, { stream: true });
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) {
        const message = JSON.parse(line);
        if (message.id !== 2) continue;
        if (message.error) throw new Error(`hooks/list failed: ${JSON.stringify(message.error)}`);
        return message.result.data.flatMap((entry: { hooks: ListedHook[] }) => entry.hooks);
      }
    }
    throw new Error(`codex app-server ended without answering hooks/list: ${await new Response(child.stderr).text()}`);
  } finally {
    clearTimeout(guard);
    child.kill(9);
    // Gone before the world is removed: a dying app-server still writes under HOME (~/.codex/.tmp).
    await child.exited;
  }
}
