/**
 * A process that writes to or drains a team inbox the way Claude Code does (claude-team.ts), for storms against
 * agentmail from another process:
 *
 *   bun claude-writer.ts append INBOX FROM COUNT PREFIX    appends COUNT entries "<PREFIX>-<n>"; prints one JSON line
 *                                                          {"written":[texts],"failed":[texts]} (failed: lock timeouts)
 *   bun claude-writer.ts drain INBOX STOPFILE              takes entries every 20 ms until STOPFILE exists and the
 *                                                          inbox is empty; prints {"taken":[texts]}
 */
import { existsSync } from "node:fs";
import { claudeAppend, claudeEntry, claudeTake } from "./claude-team.ts";

const [mode, inbox, ...rest] = process.argv.slice(2);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

if (mode === "append") {
  const [from, count, prefix] = rest;
  const written: string[] = [];
  const failed: string[] = [];
  for (let n = 0; n < Number(count); n++) {
    const text = `${prefix}-${n}`;
    (await claudeAppend(inbox!, claudeEntry(from!, text, "storm"))) ? written.push(text) : failed.push(text);
    await sleep(2);
  }
  console.log(JSON.stringify({ written, failed }));
} else if (mode === "drain") {
  const [stopFile] = rest;
  const taken: string[] = [];
  for (;;) {
    const got = await claudeTake(inbox!);
    for (const entry of got ?? []) taken.push(entry.text);
    if (got !== null && got.length === 0 && existsSync(stopFile!)) break;
    await sleep(20);
  }
  console.log(JSON.stringify({ taken }));
} else {
  console.error("usage: claude-writer.ts append INBOX FROM COUNT PREFIX | drain INBOX STOPFILE");
  process.exitCode = 2;
}
