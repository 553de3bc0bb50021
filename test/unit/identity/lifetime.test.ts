/** What identity does around a command (src/identity/lifetime.ts): which command lines start the tmux lookup early. */
import { expect, test } from "bun:test";
import { lookUpCallerEarly } from "../../../src/identity/lifetime.ts";

/** Whether the lookup would start for this command line and environment. */
function startsLookup(argv: string[], env: Record<string, string | undefined>): boolean {
  let started = false;
  lookUpCallerEarly(argv, env, () => {
    started = true;
  });
  return started;
}

const inTmux = { TMUX: "/tmp/tmux-0/default,1234,0", TMUX_PANE: "%1" };

test("the commands whose first need is the caller start the lookup, in tmux only", () => {
  for (const command of ["send", "receive", "recipients", "status"]) expect(startsLookup([command], inTmux)).toBe(true);
  for (const command of ["inbox", "doctor", "--version", ""]) expect(startsLookup(command === "" ? [] : [command], inTmux)).toBe(false);
  expect(startsLookup(["send", "bob", "hi"], {})).toBe(false);
});

test("help needs no caller; with AGENTMAIL_NAME, send and receive may need no tmux at all", () => {
  expect(startsLookup(["send", "--help"], inTmux)).toBe(false);
  expect(startsLookup(["receive", "-h"], inTmux)).toBe(false);
  expect(startsLookup(["send", "bob", "hi"], { ...inTmux, AGENTMAIL_NAME: "alice" })).toBe(false);
  expect(startsLookup(["receive", "--hook"], { ...inTmux, AGENTMAIL_NAME: "alice" })).toBe(false);
  expect(startsLookup(["status", "ready"], { ...inTmux, AGENTMAIL_NAME: "alice" })).toBe(true);
});
