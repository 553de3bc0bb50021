/**
 * `hooks install|uninstall` and the settings files it does not own: a file its owner made read-only is refused,
 * a hard-linked file stays linked, and an error about a settings file or folder names that file, not the mail store.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readConfigFile, writeConfigFile } from "../../../src/hooks/config-files.ts";
import { freshRepoAndHome, hooksInProcess } from "../../support/repo-and-home.ts";

const world = freshRepoAndHome();

const hooks = (args: string[]) => hooksInProcess(world, args);
const read = (path: string) => readFileSync(path, "utf8");

describe("a read-only settings file", () => {
  test("install refuses it, naming the file and the chmod that allows it; no file of the agent is written", async () => {
    const settings = join(world.repo.dir, ".claude", "settings.json");
    mkdirSync(join(world.repo.dir, ".claude"));
    writeFileSync(settings, '{"model": "opus"}\n');
    chmodSync(settings, 0o444);
    const run = await hooks(["install", "claude"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `error: ${settings} is read-only; make it writable (chmod u+w ${settings}) to let agentmail install its hooks; nothing was changed\n`,
    );
    expect(read(settings)).toBe('{"model": "opus"}\n');
    expect(statSync(settings).mode & 0o777).toBe(0o444);
    expect(existsSync(join(world.repo.dir, ".mcp.json"))).toBe(false);
    expect(existsSync(join(world.home, "state"))).toBe(false);
  });

  test("uninstall refuses it too, and a read-only file that needs no change is fine", async () => {
    expect((await hooks(["install", "gemini"])).code).toBe(0);
    const settings = join(world.repo.dir, ".gemini", "settings.json");
    chmodSync(settings, 0o444);
    expect((await hooks(["install", "gemini"])).code).toBe(0);
    const run = await hooks(["uninstall", "gemini"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${settings} is read-only; make it writable (chmod u+w ${settings}) to let agentmail remove its hooks`);
    expect(existsSync(settings)).toBe(true);
  });

  test("--dry-run still shows what would change", async () => {
    const settings = join(world.repo.dir, ".gemini", "settings.json");
    mkdirSync(join(world.repo.dir, ".gemini"));
    writeFileSync(settings, "{}\n");
    chmodSync(settings, 0o444);
    const run = await hooks(["install", "gemini", "--dry-run"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("would be updated");
  });
});

describe("a hard-linked settings file", () => {
  test("is written in place, so every link sees the new settings and stays linked", async () => {
    const settings = join(world.repo.dir, ".claude", "settings.json");
    const other = join(world.home, "shared-settings.json");
    mkdirSync(join(world.repo.dir, ".claude"));
    writeFileSync(other, '{\n  "model": "opus"\n}\n');
    chmodSync(other, 0o640);
    linkSync(other, settings);
    const run = await hooks(["install", "claude"]);
    expect(run.code).toBe(0);
    expect(statSync(settings).ino).toBe(statSync(other).ino);
    expect(statSync(settings).nlink).toBe(2);
    expect(read(other)).toContain("agentmail status work");
    expect(read(other)).toContain('"model": "opus"');
    expect(statSync(other).mode & 0o777).toBe(0o640);
    expect((await hooks(["uninstall", "claude"])).code).toBe(0);
    expect(read(other)).toBe('{\n  "model": "opus"\n}\n');
    expect(statSync(settings).ino).toBe(statSync(other).ino);
  });

  test("written in place, a shorter text leaves no tail of the longer one", () => {
    const path = join(world.home, "a.json");
    writeFileSync(path, '{"long": "xxxxxxxxxxxxxxxxxxxxxxxx"}\n');
    linkSync(path, join(world.home, "b.json"));
    writeConfigFile(readConfigFile(path), "{}\n", 0o600);
    expect(read(join(world.home, "b.json"))).toBe("{}\n");
  });
});

describe("errors name the settings file, not the mail store", () => {
  test("a .claude that cannot hold settings (here a file in its place)", async () => {
    writeFileSync(join(world.repo.dir, ".claude"), "not a directory");
    const run = await hooks(["install", "claude"]);
    expect(run.code).toBe(1);
    expect(run.stderr).not.toContain("mail store");
    expect(run.stderr).toContain(join(world.repo.dir, ".claude", "settings.json"));
    expect(run.stderr).toMatch(/^error: cannot write .*settings\.json \((ENOTDIR|EEXIST)\); /);
    expect(run.stderr).toContain(`make sure ${join(world.repo.dir, ".claude")} is a directory you can write to`);
  });

  test("a backup folder that cannot be created", async () => {
    mkdirSync(join(world.repo.dir, ".gemini"));
    writeFileSync(join(world.repo.dir, ".gemini", "settings.json"), "{}\n");
    writeFileSync(join(world.home, "state"), "a file where the backups would go");
    const run = await hooks(["install", "gemini"]);
    expect(run.code).toBe(1);
    expect(run.stderr).not.toContain("mail store");
    expect(run.stderr).toContain("backup");
    expect(read(join(world.repo.dir, ".gemini", "settings.json"))).toBe("{}\n");
  });
});
