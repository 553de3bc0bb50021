/** The mailman counts urgent mail in its reminder, so an agent knows to stop and read now. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createMessage } from "../../../src/mail/message.ts";
import { reminderText, urgentReminderText } from "../../../src/mailman/rules.ts";
import { runMailman } from "../../../src/mailman/loop.ts";
import { appendMessage } from "../../../src/store/file/mailbox.ts";
import { claimMailman, releaseMailman } from "../../../src/mailman/files.ts";
import { ensureRoot } from "../../../src/store/paths.ts";
import { fakeClaude, installFakeAgents, startFakeAgent } from "../../support/fake-agent.ts";
import { tempRepo } from "../../support/repo.ts";
import { TmuxServer } from "../../support/tmux-server.ts";
import { waitFor } from "../../support/workflow.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";

let repo: ReturnType<typeof tempRepo>;
let server: TmuxServer;
let root: string;

beforeAll(async () => {
  repo = tempRepo();
  root = ensureRoot(repo.mailDir);
  server = TmuxServer.start(["human", "calm", "alarmed"], repo.dir);
  const bin = installFakeAgents(repo.dir);
  for (const name of ["calm", "alarmed"]) await startFakeAgent(server, name, fakeClaude(bin));
});
afterAll(() => {
  server.stop();
  repo.remove();
});

/** Polls with the shared waitFor, every 25 ms, for at most `ms`; a timeout names the condition it waited for. */
const until = (check: () => boolean, ms = 30_000) => waitFor(() => String(check), check, ms, 25);

test("the urgent reminder counts both, in fixed words a shell cannot run", () => {
  expect(urgentReminderText(3, 1)).toBe("agentmail: 3 unread, 1 urgent. Run agentmail receive.");
  expect(urgentReminderText(3, 1)).not.toMatch(/[;&|$`'"<>()\\]/);
});

test("an agent with urgent unread mail is told how many are urgent; one without gets the plain reminder", async () => {
  await appendMessage(root, createMessage("human", "calm", "no hurry"));
  await appendMessage(root, createMessage("human", "alarmed", "no hurry"));
  await appendMessage(root, createMessage("human", "alarmed", "prod is down", new Date(), { priority: "urgent" }));
  await appendMessage(root, createMessage("human", "alarmed", "also", new Date(), { priority: "high" }));
  const stop = new AbortController();
  // The running mailman's own files (its state) live where claiming the store puts them.
  await claimMailman(root);
  const logs: string[] = [];
  const running = runMailman({
    store: new FileStore(root),
    root,
    env: server.agent("human").env,
    project: null,
    intervalMs: 60_000,
    sweepMs: 100,
    typing: "all",
    log: (line: string) => logs.push(line),
    signal: stop.signal,
  });
  try {
    // The stand-in agent CLIs answer each line they take with `got: <line>`.
    await until(() => server.capture("alarmed").includes(`got: ${urgentReminderText(3, 1)}`));
    await until(() => server.capture("calm").includes(`got: ${reminderText(1)}`));
    expect(logs.filter((line) => line.startsWith("sweep failed"))).toEqual([]);
  } finally {
    stop.abort();
    await running;
    releaseMailman(root);
  }
});
