/**
 * A real headless browser for the web page's tests and benchmark: Debian's chromium, driven by playwright-core over
 * its DevTools pipe, with a fresh profile directory each time (removed on close) and nothing that talks to the
 * network by itself. A missing chromium fails the caller with how to install it; it is never skipped.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

export const CHROMIUM = process.env.AGENTMAIL_CHROMIUM ?? "/usr/bin/chromium";
const INSTALL_HINT = `chromium is not installed at ${CHROMIUM}; run: apt-get install -y chromium (or set AGENTMAIL_CHROMIUM to its path)`;

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(viewport = { width: 1280, height: 800 }): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(INSTALL_HINT);
  const profile = mkdtempSync(join(tmpdir(), "agentmail-chromium-"));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      viewport,
      timeout: 60_000,
    });
    // Generous: a loaded machine is slow to draw. Playwright's own timeout error says it was one.
    context.setDefaultTimeout(60_000);
    return {
      context,
      async close() {
        await context.close().catch(() => {});
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
}
