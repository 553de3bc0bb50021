/**
 * `web --open`: hands the page to the desktop's opener (xdg-open, or open on macOS) without waiting for it, and
 * without putting the token on any command line (every local user can read a process's argv in /proc, and the
 * opener passes its argument on to the browser's). The URL with its token goes into a file only the user can read
 * (0600, in a fresh directory only they can enter); the opener is given that file's path, and the file sends the
 * browser on to the URL. It is removed when the server stops.
 */
import { spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freshPrivateDir } from "../room/private-dir.ts";

type Env = Record<string, string | undefined>;

export interface OpenedPage {
  /** Why the opener could not be started, or null. */
  problem: string | null;
  /** Removes the file holding the URL. Safe to call more than once. */
  remove(): void;
}

const escapeAttribute = (text: string) => text.replace(/[&"'<>]/g, (char) => `&#${char.charCodeAt(0)};`);

/** The page the opener is given: it holds the URL and goes there at once. */
export function openerPage(url: string): string {
  const target = escapeAttribute(url);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url=${target}">
<title>agentmail · opening the mail room</title>
</head>
<body><p><a href="${target}">Open the mail room</a></p></body>
</html>
`;
}

/** Writes the file holding the URL and starts the opener on its path; the URL itself is on no argv. */
export function openInBrowser(url: string, env: Env = process.env): Promise<OpenedPage> {
  const opener = process.platform === "darwin" ? "open" : "xdg-open";
  // The file is written 0600, in a directory only the user can enter.
  const dir = freshPrivateDir(env, "agentmail-web-");
  const remove = () => rmSync(dir, { recursive: true, force: true });
  const file = join(dir, "mail-room.html");
  try {
    writeFileSync(file, openerPage(url), { mode: 0o600, flag: "wx" });
  } catch (error) {
    remove();
    return Promise.resolve({ problem: `cannot write the page for ${opener} (${(error as NodeJS.ErrnoException).code ?? error})`, remove });
  }
  return new Promise((resolve) => {
    const failed = (why: unknown) => resolve({ problem: `${opener} could not be started (${why})`, remove });
    try {
      const child = spawn(opener, [file], { detached: true, stdio: "ignore", env });
      child.once("error", (error) => failed((error as NodeJS.ErrnoException).code ?? error));
      child.once("spawn", () => {
        child.unref();
        resolve({ problem: null, remove });
      });
    } catch (error) {
      failed(String(error));
    }
  });
}
