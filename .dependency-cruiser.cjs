/**
 * The import rules of src/, checked by `npm run lint` (dependency-cruiser, run with Bun: it needs a newer Node than
 * some machines have). Imports go one way, from the interfaces down to the domain:
 *
 *   src/cli.ts → commands (the tree) and identity (the early caller lookup)
 *   commands, mcp, watch, web (the interfaces) → cli (commands only), actions, identity, the domain, output, input
 *   actions (what a command does) → the feature folders, identity, store, tmux, the domain
 *   doctor → the other feature folders (it checks them); bridges, mailman, hooks, room, dead-letters (expiry, the gone rule,
 *   return paths) → identity, store, tmux, domain
 *   identity (who is calling, whom they can write to) → store, tmux, the domain
 *   store, tmux, output, input → the domain; mail and claims (the domain, pure) → mail
 *
 * A folder may always import its own files. Anything not allowed below is an error, and so is any cycle. Each
 * library is imported where it is used and nowhere else (the design card: loaded only by the commands that need it).
 */

/** Who may import whom, by folder of src/ ("cli.ts" is the entry). */
const MAY_IMPORT = {
  "cli.ts": ["commands", "identity"],
  cli: ["mail", "output"],
  commands: ["cli", "actions", "identity", "mail", "claims", "output", "input", "mcp", "watch", "web"],
  mcp: ["actions", "identity", "mail", "claims", "output"],
  watch: ["actions", "room", "identity", "mail", "output", "input"],
  web: ["actions", "room", "identity", "mail", "output"],
  actions: ["doctor", "bridges", "mailman", "hooks", "room", "dead-letters", "identity", "store", "tmux", "mail", "claims"],
  doctor: ["bridges", "mailman", "hooks", "room", "dead-letters", "identity", "store", "tmux", "mail", "claims"],
  bridges: ["identity", "store", "tmux", "mail", "claims"],
  mailman: ["identity", "store", "tmux", "mail", "claims"],
  hooks: ["identity", "store", "tmux", "mail", "claims"],
  room: ["identity", "store", "tmux", "mail", "claims"],
  "dead-letters": ["identity", "store", "tmux", "mail", "claims"],
  identity: ["store", "tmux", "mail", "claims"],
  store: ["mail", "claims"],
  tmux: ["mail"],
  output: ["mail"],
  input: ["mail"],
  claims: ["mail"],
  mail: [],
};

/** Which folders may import each library. */
const LIBRARIES = {
  citty: ["cli", "commands"],
  consola: ["output"],
  yaml: ["bridges"],
  "jsonc-parser": ["hooks"],
  "@modelcontextprotocol/sdk": ["mcp"],
  zod: ["mcp"],
  // Bun's own module (the Redis client); Bun's globals are the thin layer the design card allows elsewhere.
  bun: ["store"],
};

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const home = (folder) => (folder.endsWith(".ts") ? `^src/${escape(folder)}$` : `^src/${folder}/`);

module.exports = {
  forbidden: [
    { name: "no-cycle", severity: "error", comment: "Imports go one way: no module reaches itself again.", from: {}, to: { circular: true } },
    {
      name: "no-unresolvable",
      severity: "error",
      comment: "Every import resolves to a file or an installed package.",
      from: { path: "^src/" },
      to: { couldNotResolve: true },
    },
    {
      name: "engines-behind-the-contract",
      severity: "error",
      comment:
        "The Store contract (src/store/store.ts, opened by store/open.ts) is the only door to the mail: nothing outside src/store/ imports an engine (store/file/, store/redis/).",
      from: { path: "^src/", pathNot: "^src/store/" },
      to: { path: "^src/store/(file|redis)/" },
    },
    {
      name: "page-imports-page",
      severity: "error",
      comment: "The web page's script (src/web/page/) runs in a browser, bundled on its own: its own files and the room's types only.",
      from: { path: "^src/web/page/" },
      to: { pathNot: ["^src/web/page/", "^src/room/model\\.ts$"] },
    },
    {
      name: "nothing-imports-page",
      severity: "error",
      comment: "The server's code never imports the page's script (web/bundle-page.ts bundles it by path): it would take the DOM's types along.",
      from: { pathNot: "^src/web/page/" },
      to: { path: "^src/web/page/" },
    },
  ],
  allowed: [
    // A folder's own files.
    { from: { path: "^src/([^/]+)/" }, to: { path: "^src/$1/" } },
    ...Object.entries(MAY_IMPORT).map(([from, to]) => ({
      from: { path: home(from) },
      to: { path: to.length === 0 ? "^$" : `^src/(${to.join("|")})/` },
    })),
    // Node's built-in modules, anywhere.
    { from: { path: "^src/" }, to: { dependencyTypes: ["core"] } },
    ...Object.entries(LIBRARIES).map(([library, folders]) => ({
      from: { path: `^src/(${folders.join("|")})/` },
      to: { path: `^node_modules/${escape(library)}/` },
    })),
    // Inside a library, whatever it needs.
    { from: { path: "^node_modules/" }, to: {} },
    // The version, from package.json.
    { from: { path: "^src/mail/version\\.ts$" }, to: { path: "^package\\.json$" } },
  ],
  allowedSeverity: "error",
  options: {
    doNotFollow: { path: "(^|/)node_modules/" },
    // A git worktree may link node_modules to another checkout's; its files are still libraries, not ours.
    preserveSymlinks: true,
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
