/**
 * The mailman's native channel across projects, with the real Codex CLI: one tmux server, two repositories whose
 * windows share the name `agent`. The world's own repository (`app`) has its `agent` window running a shell; `lib`'s
 * `agent` runs Codex CLI, interactive, against the mock model. app's mailman must never put app's mail for `agent`
 * into lib's Codex (before the fix it queued it there and marked it read in app), nor name lib's pane in doctor or
 * `mailman status`; lib's own mailman does reach lib's Codex, so the channel itself works.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { am } from "../support/e2e.ts";
import { git } from "../support/projects.ts";
import { removeDir } from "../support/repo.ts";
import { printedPid } from "../support/workflow.ts";
import { loadedIn } from "./codex-raw-control.ts";
import { AGENT, carries, Interactive, SENDER, until } from "./interactive.ts";
import { launchCodex, routeByContent, setUpCodex } from "./launch.ts";

setDefaultTimeout(180_000);

/** lib's windows, as the tmux fixture knows them (their names are app's too). */
const LIB_AGENT = "agent@lib";
const LIB_SENDER = "sender@lib";

let lab: Interactive;
let libDir: string;
let libMailman: number | null = null;

const lib = () => ({ env: lab.world.env(LIB_SENDER), cwd: libDir });
const isTitle = (body: unknown) => carries(body, "Generate a concise, single-line task title");
const requestCarrying = (text: string) =>
  lab.world.mock.conversation.find((request) => !isTitle(request.body) && carries(request.body, text));

/** A window of lib named `name`, known to the fixture as `key`. */
function libWindow(key: string, name: string): void {
  const { tmux } = lab.world;
  const [windowId, paneId] = tmux
    .run(["new-window", "-d", "-P", "-F", "#{window_id} #{pane_id}", "-n", name, "-c", libDir, "bash --norc --noprofile -i"])
    .trim()
    .split(" ") as [string, string];
  tmux.agents.set(key, { name, paneId, windowId, env: { ...tmux.agent(SENDER).env, TMUX_PANE: paneId } });
}

/** One copy as the sender's `sent --json` shows it once a mailman did something with it, else null. */
async function handled(as: { env: Record<string, string>; cwd: string }, id: string) {
  const copies = JSON.parse((await am(["sent", "--json"], { ...as, binary: lab.world.binary })).stdout) as {
    id: string;
    delivery: { state: string; event?: string; reason?: string; channel?: string };
  }[];
  const copy = copies.find((each) => each.id === id);
  return copy && (copy.delivery.state !== "stored" || copy.delivery.event) ? copy : null;
}

beforeAll(async () => {
  lab = new Interactive();
  lab.world.mock.otherwise(routeByContent);
  libDir = join(realpathSync(mkdtempSync(join(tmpdir(), "agentmail-agents-lib-"))), "lib");
  git(["init", "-q", libDir], tmpdir());
  libWindow(LIB_AGENT, AGENT);
  libWindow(LIB_SENDER, SENDER);
  const codexHome = await setUpCodex(lab, [lab.world.repo.dir, libDir]);
  await launchCodex(lab, LIB_AGENT, libDir, () => loadedIn(codexHome, libDir));
  await lab.startMailman();
});

afterAll(async () => {
  if (libMailman !== null) await am(["mailman", "stop"], { ...lib(), binary: lab.world.binary }).catch(() => null);
  await lab?.stop();
  if (libDir) removeDir(join(libDir, ".."));
});

describe("two projects with an `agent` window each on one tmux server; lib's runs Codex CLI", () => {
  test("app's mail for its agent (a shell) is never queued into lib's Codex; doctor and status name app's pane", async () => {
    const id = await lab.world.send(SENDER, AGENT, "For app's agent only (cx-app-only-5d2).");
    const copy = await until(
      "app's mailman to handle the copy",
      () => handled({ env: lab.world.env(SENDER), cwd: lab.world.repo.dir }, id),
      60_000,
      () => lab.mailmanLog(),
    );
    expect(copy.delivery).toMatchObject({ state: "stored", event: "unreachable" });
    expect(copy.delivery.reason).toContain(`pane ${lab.pane(AGENT)} runs bash`);
    expect(requestCarrying("cx-app-only-5d2")).toBeUndefined();
    expect(lab.mailmanLog()).not.toContain("framed");
    expect(lab.world.mailbox(AGENT).map((message) => message.read_flag)).toEqual([false]);
    const status = JSON.parse((await lab.world.agentmail(["mailman", "status", "--json"], SENDER)).stdout) as {
      agents: { name: string; outcome: string; detail: string }[];
    };
    expect(status.agents.find((agent) => agent.name === AGENT)).toMatchObject({ outcome: "no_agent_pane" });
    const doctor = (await lab.world.agentmail(["doctor"], SENDER)).stdout;
    expect(doctor).toContain(`note delivery: "${AGENT}": no agent CLI in its window (pane ${lab.pane(AGENT)} runs bash`);
    expect(doctor).not.toContain(`(pane ${lab.pane(LIB_AGENT)})`);
  });

  test("lib's own mailman reaches lib's Codex: the channel works, for its own project", async () => {
    const started = await am(["mailman", "--daemon", "--sweep", "0.5"], { ...lib(), binary: lab.world.binary });
    expect(started.code).toBe(0);
    libMailman = printedPid(started.stdout);
    const sent = await am(["send", AGENT, "For lib's agent (cx-lib-own-9a4)."], { ...lib(), binary: lab.world.binary });
    expect(sent.code).toBe(0);
    const id = sent.stdout.trim();
    await until("a model request carrying lib's mail", () => requestCarrying("cx-lib-own-9a4"), 60_000);
    const copy = await until("lib's copy read", async () => {
      const found = await handled(lib(), id);
      return found?.delivery.state === "read" ? found : null;
    });
    expect(copy.delivery.channel).toMatch(/^codex-(queue|steer)$/);
  });
});
