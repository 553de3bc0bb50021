/**
 * The web server's rules that test/unit/room/views.test.ts leaves out, in process through its request handler: the
 * token is the one value in the page's HTML and cannot leave its attribute; methods, oversized and malformed writes;
 * the event stream's heartbeat and pages that go away; a store that cannot be read while the room is followed.
 */
import { afterEach, beforeEach, describe, expect, jest, test } from "bun:test";
import { createMessage } from "../../../src/mail/message.ts";
import { Room } from "../../../src/room/room.ts";
import { FileStore } from "../../../src/store/file/file-store.ts";
import { ensureRoot } from "../../../src/store/paths.ts";
import { RedisStore } from "../../../src/store/redis/redis-store.ts";
import { parseServerUrl } from "../../../src/store/redis/url.ts";
import { pageScript } from "../../../src/web/bundle-page.ts";
import { shellHtml } from "../../../src/web/page.ts";
import { WebApp } from "../../../src/web/server.ts";
import { RedisServer } from "../../support/redis-server.ts";
import { tempRepo } from "../../support/repo.ts";
import { roomFacts } from "../../support/room-world.ts";
import { waitFor, waitForTurns } from "../../support/workflow.ts";

const TOKEN = "t0ken-of-this-run";

let repo: ReturnType<typeof tempRepo>;
let store: FileStore;
let rooms: Room[];
beforeEach(() => {
  repo = tempRepo();
  ensureRoot(repo.mailDir);
  store = new FileStore(repo.mailDir);
  rooms = [];
});
afterEach(() => {
  for (const room of rooms) room.close();
  repo.remove();
});

async function web(): Promise<WebApp> {
  const room = await Room.open(store, { human: "ana", host: "here", facts: roomFacts() });
  rooms.push(room);
  const app = new WebApp(room, { invocation: { cwd: repo.dir, env: { HOME: repo.dir } }, human: "ana", readOnly: false, token: TOKEN });
  app.port = 4321;
  return app;
}
const request = (app: WebApp, method: string, path: string, body?: string, type = "application/json") =>
  app.handle(
    new Request(`http://127.0.0.1:4321${path}`, {
      method,
      headers: { host: "127.0.0.1:4321", "content-type": type, "x-agentmail-token": TOKEN },
      body,
    }),
  );
const errorOf = async (response: Response): Promise<Record<string, unknown>> => ({
  status: response.status,
  ...((await response.json()) as { error: Record<string, unknown> }).error,
});

/** A stream's text as it comes, read on in the background. */
function follow(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let ended = false;
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    ended = true;
  })();
  return { text: () => text, ended: () => ended, cancel: () => reader.cancel() };
}

describe("the page's shell", () => {
  test("the token is the only value in the HTML, and even a hostile one cannot leave its attribute", () => {
    const html = shellHtml(`"><script>alert(1)</script>'&`);
    expect(html).not.toContain("<script>alert");
    expect(html).not.toMatch(/token=[^"]*"[^ >]/);
    expect(html).toContain(`/app.js?token=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E&#39;%26`);
    expect(html.match(/<script/g)).toHaveLength(1);
  });

  test("the script is the page's modules bundled into one classic script: no import left, it parses on its own", async () => {
    const script = await pageScript();
    expect(script).not.toMatch(/^\s*import[\s{*]/m);
    expect(script).not.toMatch(/\bexport\s*[{*]/);
    expect(script).toContain("agentmail-first-render");
    expect(new Function(script)).toBeInstanceOf(Function);
    // Bundled once: the second answer is the first.
    expect(await pageScript()).toBe(script);
  });
});

describe("writes", () => {
  test("only GET and POST are served", async () => {
    const app = await web();
    for (const method of ["PUT", "DELETE", "PATCH"]) {
      expect(await errorOf(await request(app, method, `/api/send?token=${TOKEN}`, "{}"))).toEqual({
        status: 405,
        code: "method",
        message: "only GET and POST are served",
      });
    }
  });

  test("a request over 1 MiB is refused, and nothing is sent", async () => {
    const app = await web();
    const body = JSON.stringify({ to: "ana", body: "x".repeat(1024 * 1024) });
    expect(await errorOf(await request(app, "POST", "/api/send", body))).toEqual({
      status: 413,
      code: "message_too_large",
      message: "the request is too large",
    });
    expect(await store.mailboxes()).toEqual([]);
  });

  test("a body that is not a JSON object, or a field that is not text, is refused saying so", async () => {
    const app = await web();
    for (const body of ["not json", "[1,2]", "null", '"to ana"', "42"]) {
      const refused: Record<string, unknown> = { body, ...(await errorOf(await request(app, "POST", "/api/send", body))) };
      expect(refused).toEqual({
        body,
        status: 400,
        code: "usage",
        message: "the request is not a JSON object",
      });
    }
    expect(await errorOf(await request(app, "POST", "/api/send", JSON.stringify({ to: ["ana"], body: "hi" })))).toEqual({
      status: 400,
      code: "usage",
      message: "to must be text",
    });
    expect(await store.mailboxes()).toEqual([]);
  });
});

describe("the event stream", () => {
  test("an idle stream gets a comment every 15 s, which keeps it inside the server's idle timeout", async () => {
    jest.useFakeTimers();
    const app = await web();
    try {
      const stream = follow(await request(app, "GET", `/events?token=${TOKEN}`));
      await waitForTurns("the stream's start", () => stream.text().includes(": live"));
      jest.advanceTimersByTime(15_000);
      await waitForTurns("the first heartbeat", () => stream.text().includes(": still here\n\n"));
      jest.advanceTimersByTime(15_000);
      await waitForTurns("the second heartbeat", () => stream.text().split(": still here").length === 3);
      app.close();
      await waitForTurns("the stream's end", () => stream.ended());
    } finally {
      jest.useRealTimers();
    }
  });

  test("a page that goes away gets nothing more; the pages still open get every change", async () => {
    const app = await web();
    const gone = follow(await request(app, "GET", `/events?token=${TOKEN}`));
    const open = follow(await request(app, "GET", `/events?token=${TOKEN}`));
    await waitFor("both streams' start", () => gone.text().includes(": live") && open.text().includes(": live"));
    await gone.cancel();
    const before = gone.text();
    const message = createMessage("bob", "ana", "still here?");
    await store.append(message);
    let stop = () => {};
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    const following = app.follow(stopped);
    await waitFor("the open page's mail event", () => open.text().includes(`"id":"${message.id}"`));
    stop();
    await following;
    expect(gone.text()).toBe(before);
    app.close();
  });
});

describe("following the store", () => {
  test("a store that cannot be reached is reported once, while it lasts, and again when it answers", async () => {
    const server = await RedisServer.start();
    const redis = new RedisStore({ address: parseServerUrl(server.url), namespace: `web-${process.pid}`, host: "here", timeoutMs: 2_000 });
    try {
      const room = await Room.open(redis, { human: "ana", host: "here", facts: roomFacts() });
      rooms.push(room);
      const app = new WebApp(room, { invocation: { cwd: repo.dir, env: {} }, human: "ana", readOnly: false, token: TOKEN });
      const reports: string[] = [];
      let stop = () => {};
      const stopped = new Promise<void>((resolve) => {
        stop = resolve;
      });
      const following = app.follow(stopped, (message) => reports.push(message));
      await server.stop();
      const failing = await waitFor("the failure reported", () => reports[0]);
      expect(failing).toStartWith("cannot read the mail store: ");
      expect(failing).toContain(server.socket);
      await server.launch();
      await waitFor("the store answering again", () => reports.includes("the mail store answers again"));
      const message = createMessage("bob", "ana", "after the outage");
      await redis.append(message);
      await waitFor("the room to have the new mail", () => room.latest(5).some((item) => item.id === message.id));
      stop();
      await following;
      expect(reports).toEqual([failing, "the mail store answers again"]);
    } finally {
      redis.close();
      await server.remove();
    }
  }, 60_000);
});
