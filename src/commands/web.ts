import { defineCommand, output } from "../cli/definitions.ts";
import { currentInvocation } from "../identity/invocation.ts";
import { humanName } from "../actions/human.ts";
import { leaveRoom, openRoom, otherProjects } from "../actions/room.ts";
import { usageError } from "../mail/errors.ts";
import { displayName } from "../mail/names.ts";
import { log } from "../output/log.ts";
// Statically, not lazily: as a chunk entry of its own it made the bundler split a module send loads into one more
// chunk (test/unit/room/lazy-load.test.ts). This command is its own chunk anyway.
import { WebApp } from "../web/server.ts";

/** A fresh token for each run: 32 random bytes, base64url. */
function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

export default defineCommand({
  meta: {
    name: "web",
    description: "Serve the mail room as a local web page (127.0.0.1 only, a fresh token in the URL it prints)",
    examples: [
      "agentmail web",
      "agentmail web --port 8025 --open",
      "agentmail web --read-only",
      "agentmail web --observer",
      "agentmail web --all-projects",
      "AGENTMAIL_HUMAN=ana agentmail web",
    ],
  },
  args: {
    port: { type: "string", valueHint: "n", description: "Listen on this port (default: a free one)" },
    open: { type: "boolean", description: "Open the page in the desktop's browser" },
    "read-only": { type: "boolean", description: "Refuse every write: no compose, reply, acknowledge or archive" },
    observer: {
      type: "boolean",
      description: "Also print an observer's URL: its token reads the room and writes nothing (a new one each run)",
    },
    "all-projects": {
      type: "boolean",
      description: "Show every project's agents and mail on the tmux servers, each with its project (write to name@project)",
    },
    as: { type: "string", valueHint: "name", description: "Your name as a sender (default: $AGENTMAIL_HUMAN)" },
  },
  async run({ args, print }) {
    const invocation = currentInvocation();
    const human = humanName(invocation, args.as);
    const given = args.port;
    const port = given === undefined ? 0 : Number(given);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw usageError(`--port takes a port number from 1 to 65535, not '${displayName(given ?? "")}'`);
    }
    const readOnly = args["read-only"];
    const projects = args["all-projects"] ? await otherProjects(invocation) : {};
    const room = await openRoom(invocation, human, { register: !readOnly, ...projects });
    const { restoreNormalJit } = await import("../cli/jit-policy.ts");
    restoreNormalJit();
    const token = newToken();
    const observerToken = args.observer ? newToken() : null;
    const app = new WebApp(room, { invocation, human, readOnly, token, observerToken });
    let server: { port: number; stop(): void } | null = null;
    let opened: { remove(): void } | null = null;
    try {
      server = app.listen(port);
      const url = `http://127.0.0.1:${server.port}/?token=${token}`;
      const observer = observerToken === null ? null : `http://127.0.0.1:${server.port}/?token=${observerToken}`;
      const data = { url, port: server.port, token, read_only: readOnly, human };
      await print(
        observer === null
          ? output(data, `${url}\n`)
          : output(
              { ...data, observer_url: observer, observer_token: observerToken },
              `${url}\nobserver (reads, never writes): ${observer}\n`,
            ),
      );
      log.info(`serving the mail room of ${room.store.description} on 127.0.0.1:${server.port}; Ctrl-C stops it`);
      if (args.open) {
        const { openInBrowser } = await import("../web/open-browser.ts");
        const page = await openInBrowser(url, invocation.env);
        opened = page;
        if (page.problem) log.warn(`${page.problem}; open the URL above yourself`);
      }
      const stop = new Promise<void>((resolve) => {
        for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"] as const) process.once(signal, () => resolve());
      });
      await app.follow(stop, (message) => log.warn(message));
    } finally {
      opened?.remove();
      app.close();
      server?.stop();
      if (readOnly) room.close();
      else await leaveRoom(invocation, room, human);
    }
  },
});
