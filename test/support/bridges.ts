/**
 * Helpers for the bridge tests: the seeds' example messages (test/fixtures/bridges), read verbatim, and a throwaway
 * world in process: a store, the three peers' directories beside it, bridges configured, agents registered.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { addBridge } from "../../src/actions/bridge.ts";
import type { Message } from "../../src/mail/message.ts";
import { mailboxPath } from "../../src/store/local/layout.ts";
import { ensureRoot } from "../../src/store/paths.ts";
import { writeStatus } from "../../src/store/file/status.ts";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "bridges");

export const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");

export interface BridgeWorld {
  dir: string;
  root: string;
  place: { cwd: string; env: Record<string, string> };
  /** `.mail`, `.roo/mailbox` and the D-Mail endpoint `paintress` (`tool/`). */
  mail: string;
  roo: string;
  tool: string;
  write(relative: string, text: string): string;
  messages(agent: string): Message[];
  remove(): void;
}

/** A store with agents registered, `.mail` and `.roo/mailbox` bridged, and a D-Mail endpoint `paintress` in `tool/`. */
export async function bridgeWorld(
  agents: string[] = ["alice", "bob"],
  dmail: { routes?: string[]; to?: string } = { to: "alice" },
): Promise<BridgeWorld> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-bridges-")));
  const root = ensureRoot(join(dir, "store"));
  const place = { cwd: dir, env: { AGENTMAIL_DIR: root } };
  for (const agent of agents) writeStatus(root, { name: agent, status: "ready", pane: "%1" });
  for (const sub of ["tool/inbox", "tool/outbox", "tool/archive"]) mkdirSync(join(dir, sub), { recursive: true });
  await addBridge(place, { kind: "feat124" });
  await addBridge(place, { kind: "roo" });
  await addBridge(place, { kind: "dmail", name: "paintress", dir: "tool", ...dmail });
  const world: BridgeWorld = {
    dir,
    root,
    place,
    mail: join(dir, ".mail"),
    roo: join(dir, ".roo", "mailbox"),
    tool: join(dir, "tool"),
    write(relative, text) {
      const path = join(dir, relative);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      return path;
    },
    messages(agent) {
      try {
        return readFileSync(mailboxPath(root, agent), "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Message);
      } catch {
        return [];
      }
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
  return world;
}

/** A FEAT-124 message as fugue writes one. */
export function feat124Text(from: string, to: string, body: string, timestamp = "2024-01-28T15:30:00Z"): string {
  return `---\nfrom: ${JSON.stringify(from)}\nto: ${JSON.stringify(to)}\ntype: status\ntimestamp: ${timestamp}\n---\n\n${body}\n`;
}

/** Nine lists of nine, each of the one before: 9^8 items once expanded, from a few hundred bytes. */
function billionLaughs(): string {
  const lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"];
  for (let level = 1; level < 9; level++) {
    const [name, previous] = [String.fromCharCode(97 + level), String.fromCharCode(96 + level)];
    lines.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(", ")}]`);
  }
  return lines.join("\n");
}

/**
 * Frontmatter that makes the YAML library throw, or that would expand past any bound, each with what the reason
 * it is left alone for says. The small bomb stays under the library's own alias limit: only agentmail's bound on
 * the expanded data catches it.
 */
export const HOSTILE_YAML: Record<string, { yaml: string; reason: string }> = {
  "unknown-alias": { yaml: "x: *undefined", reason: "Unresolved alias" },
  "alias-loop": { yaml: "x: &a [*a]", reason: "an alias to a list or map that holds it (a loop)" },
  "alias-bomb": { yaml: billionLaughs(), reason: "Excessive alias count" },
  "small-alias-bomb": {
    yaml: `a: &a ${"x".repeat(2000)}\nb: [${Array(60).fill("*a").join(", ")}]`,
    reason: "with its aliases expanded, is over the 65536-byte limit",
  },
};

/** A peer's file with hostile frontmatter (FEAT-124's fields first, so nothing but the YAML is wrong). */
export const hostileText = (yaml: string) =>
  `---\nfrom: w\nto: alice\ntype: status\ntimestamp: 2024-01-28T15:30:00Z\n${yaml}\n---\n\nbody\n`;
