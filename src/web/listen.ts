/** The web server's one Bun call: serve a request handler on 127.0.0.1 only. */
import { AgentmailError } from "../mail/errors.ts";

export interface Listening {
  port: number;
  stop(): void;
}

/** Port 0 lets the system pick a free one. */
export function listen(port: number, handle: (request: Request) => Promise<Response>): Listening {
  let server: ReturnType<typeof Bun.serve>;
  try {
    // The event stream stays open for as long as the page does; its heartbeat (every 15 s) keeps it inside this.
    server = Bun.serve({ hostname: "127.0.0.1", port, fetch: handle, idleTimeout: 60 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    const fix = code === "EADDRINUSE" ? "pick another with --port, or leave --port out for a free one" : "pick another with --port";
    throw new AgentmailError("io", `cannot listen on 127.0.0.1:${port} (${code}); ${fix}`);
  }
  return { port: server.port ?? port, stop: () => void server.stop(true) };
}
