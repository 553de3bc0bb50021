/**
 * What `agentmail doctor` says of the `agentmail` on PATH: nothing for the native binary; a note for a script, which
 * every hook would start first — the npm package's Node program (left where npm ran no install scripts) named with
 * its package and both fixes, anyone's other script with its interpreter. The real npm install is in
 * test/scenarios/install.test.ts.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commandFindings } from "../../../src/doctor/binary.ts";
import { runInProcess } from "../../support/in-process.ts";

const NPM_COMMAND = join(import.meta.dir, "..", "..", "..", "packaging", "npm", "bin", "agentmail");

let scratch: string;
let bin: string;
beforeEach(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "agentmail-doctor-binary-")));
  bin = join(scratch, "bin");
  mkdirSync(bin);
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

const findings = () => commandFindings({ cwd: scratch, env: { PATH: `${bin}:/usr/bin:/bin` } });

/** The layout `npm install -g --ignore-scripts` leaves: the package's bin/agentmail (its Node program), linked into the prefix's bin/. */
function npmInstalledWithoutScripts(): string {
  const dir = join(scratch, "lib", "node_modules", "@agentmail-tmux", "agentmail");
  mkdirSync(join(dir, "bin"), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "@agentmail-tmux/agentmail", bin: { agentmail: "bin/agentmail" } }));
  copyFileSync(NPM_COMMAND, join(dir, "bin", "agentmail"));
  symlinkSync(join(dir, "bin", "agentmail"), join(bin, "agentmail"));
  return join(dir, "bin");
}

describe("the agentmail on PATH", () => {
  test("the native binary (through a link, as npm and install.sh leave it): nothing to say; none on PATH: nothing either", () => {
    expect(findings()).toEqual([]);
    symlinkSync(process.execPath, join(bin, "agentmail"));
    expect(findings()).toEqual([]);
  });

  test("the npm package's Node program: a note that every hook starts Node, with its package and both fixes", () => {
    const dir = npmInstalledWithoutScripts();
    expect(findings()).toEqual([
      {
        area: "hooks",
        status: "note",
        message:
          `the agentmail on PATH (${bin}/agentmail) is the npm package's Node program, not the native binary (npm ran no ` +
          "install scripts), so every hook starts Node first",
        fix:
          `run it once (agentmail --version) as a user who may write ${dir}: it puts the binary in its place; or install ` +
          "again with its install script: npm install -g --allow-scripts=@agentmail-tmux/agentmail @agentmail-tmux/agentmail",
      },
    ]);
  });

  test("a script of someone's own: a note naming its interpreter", () => {
    writeFileSync(join(bin, "agentmail"), '#!/bin/sh\nexec /opt/agentmail "$@"\n', { mode: 0o755 });
    expect(findings()).toEqual([
      {
        area: "hooks",
        status: "note",
        message: `the agentmail on PATH (${bin}/agentmail) is a script (#!/bin/sh), not the native binary: every hook starts it first`,
        fix: "put the agentmail binary itself on the PATH in its place (docs/install.md), unless the script is there on purpose",
      },
    ]);
  });

  test("doctor --json lists it as a note", async () => {
    npmInstalledWithoutScripts();
    const result = await runInProcess(["doctor", "--json"], { env: { PATH: `${bin}:/usr/bin:/bin`, HOME: scratch }, cwd: scratch });
    const report = JSON.parse(result.stdout) as { findings: { area: string; status: string; message: string }[] };
    expect(report.findings.filter((each) => each.message.startsWith("the agentmail on PATH"))).toEqual([
      expect.objectContaining({ area: "hooks", status: "note" }),
    ]);
  });
});
