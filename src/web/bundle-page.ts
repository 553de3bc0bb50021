/**
 * The page's script: src/web/page/ bundled for the browser into one file. build.ts bundles it once and embeds the
 * text in the binary (as AGENTMAIL_PAGE_SCRIPT); run from source (the tests, `bun src/cli.ts`) it is bundled here on
 * first use, with the same settings.
 */
import { join } from "node:path";

/** Set by build.ts when it compiles the binary: the bundled script. */
declare const AGENTMAIL_PAGE_SCRIPT: string | undefined;

/** The page's entry: everything it runs is imported from there. */
export const PAGE_ENTRY = join(import.meta.dir, "page", "main.ts");

/** Bundles the page's script (one classic script, no imports left: the CSP serves it from 'self' only). */
export async function bundlePage(): Promise<string> {
  const result = await Bun.build({ entrypoints: [PAGE_ENTRY], target: "browser", format: "iife", minify: true });
  if (!result.success) throw new Error(`the page's script did not bundle: ${result.logs.map(String).join("; ")}`);
  return await result.outputs[0]!.text();
}

let bundled: Promise<string> | null = null;

/** The script the server sends as /app.js. */
export function pageScript(): Promise<string> {
  if (typeof AGENTMAIL_PAGE_SCRIPT === "string") return Promise.resolve(AGENTMAIL_PAGE_SCRIPT);
  bundled ??= bundlePage();
  return bundled;
}
