/** `web --open`: hands the URL to the desktop's opener (xdg-open, or open on macOS) without waiting for it. */
import { spawn } from "node:child_process";

/** Starts the opener; resolves with why it could not be started, or null. The URL is one argv entry, no shell. */
export function openInBrowser(url: string): Promise<string | null> {
  const opener = process.platform === "darwin" ? "open" : "xdg-open";
  return new Promise((resolve) => {
    try {
      const child = spawn(opener, [url], { detached: true, stdio: "ignore" });
      child.once("error", (error) => resolve(`${opener} could not be started (${(error as NodeJS.ErrnoException).code ?? error})`));
      child.once("spawn", () => {
        child.unref();
        resolve(null);
      });
    } catch (error) {
      resolve(`${opener} could not be started (${String(error)})`);
    }
  });
}
