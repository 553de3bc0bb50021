/**
 * `agentmail web` in a real headless browser (Debian's chromium through playwright-core), against the compiled
 * binary, on the file store and on a private redis-server: the token, the room, the live feed receiving what agents
 * send from tmux, a thread, writing as the person (received by the agent with `agentmail receive`), a hostile body
 * that runs nothing, a cross-site write refused, and --read-only. Checks wait for what a person would see.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { dirname, join } from "node:path";
import type { Page } from "playwright-core";
import { am, expectSent } from "../support/e2e.ts";
import { launchBrowser, type Browser } from "../support/browser.ts";
import { fakeClaude, installFakeAgents, startFakeAgent } from "../support/fake-agent.ts";
import { HUMAN, RoomWorld, Running, waitUntil, type Engine } from "../support/room-world.ts";
import { SshServer } from "../support/ssh-server.ts";

/** The page's document and window, inside page.evaluate (the project's TypeScript has no DOM library). */
declare const document: any;
declare const window: any;

const HOSTILE =
  `<script>window.__pwned = "script"</script><img src=x onerror="window.__pwned = 'img'; alert(1)">` +
  `<a href="javascript:window.__pwned='link'">click me</a> <iframe src="javascript:alert(2)"></iframe> {{constructor.constructor('alert(3)')()}}`;

for (const engine of ["file", "redis"] as Engine[]) {
  describe(`web on the ${engine} store`, () => {
    let world: RoomWorld;
    let browser: Browser;
    let web: Running;
    let url: string;
    let page: Page;
    const dialogs: string[] = [];
    const errors: string[] = [];

    beforeAll(async () => {
      world = await RoomWorld.start(engine, ["alice", "bob"]);
      web = new Running(["web", "--port", "0", "--json"], world.humanEnv(), world.repo.dir);
      url = (JSON.parse(await web.line()) as { url: string }).url;
      browser = await launchBrowser();
      page = await browser.context.newPage();
      page.on("dialog", (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      page.on("pageerror", (error) => errors.push(error.message));
    });

    afterAll(async () => {
      await browser?.close();
      if (web) expect(await web.stop()).toBe(0);
      await world?.remove();
    });

    const base = () => url.slice(0, url.indexOf("/?"));
    const feedRow = (id: string, mailbox: string) => page.locator(`#feed tr[data-id="${id}"][data-mailbox="${mailbox}"]`);

    test("without the token, or with another, nothing is served; with it, the room shows every agent", async () => {
      const bare = await page.goto(`${base()}/`);
      expect(bare!.status()).toBe(403);
      expect(await page.textContent("body")).toContain("needs the token");
      const wrong = await page.goto(`${base()}/?token=not-the-token`);
      expect(wrong!.status()).toBe(403);
      const api = await page.goto(`${base()}/api/room`);
      expect(api!.status()).toBe(403);
      const ok = await page.goto(url);
      expect(ok!.status()).toBe(200);
      await page.waitForSelector('#agents tr[data-agent="alice"]');
      await page.waitForSelector('#agents tr[data-agent="bob"]');
      expect(await page.textContent(`#agents tr[data-agent="${HUMAN}"]`)).toContain("(you)");
      await page.waitForSelector("body[data-live='1']");
    });

    test("a message sent from tmux appears on the open page, and its state turns read when the agent receives it", async () => {
      await page.goto(url);
      await page.waitForSelector("body[data-live='1']");
      world.typeIn("alice", "send bob --subject 'PR #12' 'PR #12 is ready for review'");
      const row = page.locator('#feed tr[data-mailbox="bob"]', { hasText: "PR #12" });
      await row.waitFor();
      const id = (await row.getAttribute("data-id"))!;
      await waitUntil("the id printed in alice's pane", () => world.tmux.capture("alice").includes(id));
      expect(await feedRow(id, "bob").textContent()).toContain("PR #12");
      expect(await feedRow(id, "bob").locator("[data-state]").getAttribute("data-state")).toBe("stored");
      expect((await world.am("bob", ["receive"])).stdout).toContain("PR #12 is ready for review");
      await page.waitForSelector(`#feed tr[data-id="${id}"] [data-state="read"]`);
    });

    test("a thread shows the whole conversation, with each copy's state", async () => {
      const id = expectSent(await world.am("alice", ["send", "bob", "--subject", "Deploy", "who deploys tonight?"]));
      await world.am("bob", ["receive"]);
      expectSent(await world.am("bob", ["reply", id, "I do, at 22:00"]));
      await page.goto(url);
      await feedRow(id, "bob").locator("td.preview a").click();
      await page.waitForSelector("#thread");
      await waitUntil("both messages in the thread", async () => (await page.locator("#thread article.message").count()) === 2);
      const bodies = await page.locator("#thread pre.body").allTextContents();
      expect(bodies).toEqual(["who deploys tonight?", "I do, at 22:00"]);
      expect(await page.textContent("#thread h2")).toContain("Deploy");
      // bob's reply acknowledges what it answers; on Redis the page learns it from the feed's next look.
      await page.waitForSelector(`#thread article[data-id="${id}"] [data-state="acknowledged"]`);
    });

    test("the person writes from the page; the agent receives it with agentmail receive, from the person's name", async () => {
      await page.goto(`${url}#/compose/bob`);
      await page.fill('#compose-form input[name="subject"]', "From the room");
      await page.fill('#compose-form textarea[name="body"]', "please stop and write a summary");
      await page.selectOption('#compose-form select[name="priority"]', "high");
      await page.click('#compose-form button[type="submit"]');
      await page.waitForSelector("#thread");
      const received = await world.am("bob", ["receive"]);
      expect(received.code).toBe(0);
      expect(received.stdout).toMatch(
        new RegExp(`^From: ${HUMAN}\\nID: \\w{8}\\nSubject: From the room\\nPriority: high\\n\\n> please stop and write a summary\\n$`),
      );
    });

    test("the person replies in the thread of a message to them, and acknowledges another", async () => {
      const question = expectSent(await world.am("bob", ["send", HUMAN, "--subject", "Merge?", "may I merge?"]));
      const fyi = expectSent(await world.am("bob", ["send", HUMAN, "fyi: tests are green"]));
      await page.goto(`${url}#/thread/${question}`);
      // The view of this thread, not the one the page showed before the hash changed.
      await page.waitForSelector(`#thread article[data-id="${question}"]`);
      await page.fill("#reply-form textarea", "yes, merge");
      // The status line may still say "sent <id>" of the previous test's compose (a hash change keeps the page): while
      // the reply is held on its way, it must say so instead, or "sent" would be taken for this reply's.
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      await page.route("**/api/reply", async (route) => {
        await held;
        await route.continue();
      });
      try {
        await page.click("#reply-form button[type=submit]");
        await page.locator("#status", { hasText: /^sending…$/ }).waitFor();
      } finally {
        release();
      }
      const status = page.locator("#status", { hasText: /^sent \w{8}$/ });
      await status.waitFor();
      const replyId = (await status.textContent())!.slice("sent ".length);
      await page.unroute("**/api/reply");
      const reply = await world.am("bob", ["receive", "--json"]);
      expect(reply.code).toBe(0);
      expect(JSON.parse(reply.stdout)).toMatchObject({
        id: replyId,
        from: HUMAN,
        message: "yes, merge",
        in_reply_to: question,
        subject: "Re: Merge?",
      });
      await page.goto(`${url}#/thread/${fyi}`);
      await page.click(`article[data-id="${fyi}"] button[data-action="ack"]`);
      await page.waitForSelector(`article[data-id="${fyi}"] [data-state="acknowledged"]`);
    });

    test("a reply being typed stays, and keeps the cursor, when the thread is drawn again because its mail moved", async () => {
      const id = expectSent(await world.am("bob", ["send", `alice,${HUMAN}`, "--subject", "Lunch?", "lunch at noon?"]));
      await page.goto(`${url}#/thread/${id}`);
      await page.waitForSelector(`#thread article[data-id="${id}"]`);
      await page.click("#reply-form textarea");
      await page.keyboard.type("noon is");
      // alice reads her copy: the page draws the thread again to show it.
      expect((await world.am("alice", ["read", id])).stdout).toContain("lunch at noon?");
      await page.waitForSelector(`#thread article[data-id="${id}"] [data-state="read"]`);
      await page.keyboard.type(" fine");
      expect(await page.inputValue("#reply-form textarea")).toBe("noon is fine");
      await page.click("#reply-form button[type=submit]");
      const status = page.locator("#status", { hasText: /^sent \w{8}$/ });
      await status.waitFor();
      expect(await page.inputValue("#reply-form textarea")).toBe("");
      const replyId = (await status.textContent())!.slice("sent ".length);
      const reply = await world.am("bob", ["read", replyId, "--json"]);
      expect(JSON.parse(reply.stdout)).toMatchObject({
        id: replyId,
        message: "noon is fine",
        in_reply_to: id,
      });
    });

    test("cleanup run in an agent's pane keeps the person, who has no window: agents can still write to them", async () => {
      const cleaned = await world.am("alice", ["cleanup", "--json"]);
      expect(cleaned.code).toBe(0);
      expect(JSON.parse(cleaned.stdout).forgotten).toEqual([]);
      expectSent(await world.am("bob", ["send", HUMAN, "still there?"]));
    });

    test("a hostile body renders as text and runs nothing: no script, no image handler, no javascript: link", async () => {
      const id = expectSent(await world.am("alice", ["send", "bob", "--subject", `<img src=x onerror=alert(9)>`, HOSTILE]));
      await page.goto(url);
      await feedRow(id, "bob").waitFor();
      expect(await feedRow(id, "bob").locator("td.preview").textContent()).toBe("<img src=x onerror=alert(9)>");
      await page.goto(`${url}#/thread/${id}`);
      await page.waitForSelector(`#thread article[data-id="${id}"]`);
      expect(await page.textContent(`#thread article[data-id="${id}"] pre.body`)).toBe(HOSTILE);
      const injected = await page.evaluate(() => ({
        pwned: (globalThis as { __pwned?: unknown }).__pwned ?? null,
        elements: document.querySelectorAll("#main img, #main script, #main iframe").length,
        links: [...document.querySelectorAll("#main a")].filter((a) => !(a.getAttribute("href") ?? "").startsWith("#/")).length,
      }));
      expect(injected).toEqual({ pwned: null, elements: 0, links: 0 });
      expect(dialogs).toEqual([]);
      expect(errors).toEqual([]);
    });

    test("a page on another site cannot write through a form or a fetch: it has no token header", async () => {
      const target = base();
      // Another origin on this machine, serving a page that tries both ways a site can write to another.
      const attacker = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        fetch: () =>
          new Response(
            `<!doctype html><form id="f" method="POST" action="${target}/api/send" enctype="text/plain">` +
              `<input name='{"to":"bob","body":"csrf by form","x":"' value='"}'></form>` +
              `<script>fetch("${target}/api/send", { method: "POST", mode: "no-cors", body: '{"to":"bob","body":"csrf by fetch"}' })` +
              `.then((r) => { document.title = r.type; document.getElementById("f").submit(); }, (e) => { document.title = "failed"; document.getElementById("f").submit(); });</script>`,
            { headers: { "content-type": "text/html" } },
          ),
      });
      const other = await browser.context.newPage();
      try {
        await other.goto(`http://127.0.0.1:${attacker.port}/`);
        await other.waitForURL(`${target}/api/send`);
        expect(await other.textContent("body")).toContain("forbidden");
      } finally {
        await other.close();
        attacker.stop(true);
      }
      const inbox = (await world.am("bob", ["inbox", "--all", "--json"])).stdout;
      expect(inbox).not.toContain("csrf");
    });

    test("--read-only shows the room and refuses every write", async () => {
      const readOnly = new Running(["web", "--read-only", "--json"], world.humanEnv(), world.repo.dir);
      try {
        const { url: readOnlyUrl, token } = JSON.parse(await readOnly.line()) as { url: string; token: string };
        const viewer = await browser.context.newPage();
        await viewer.goto(`${readOnlyUrl}#/compose/bob`);
        await viewer.waitForSelector("#write-note");
        expect(await viewer.textContent("#write-note")).toContain("read-only");
        expect(await viewer.locator("#compose-form").count()).toBe(0);
        const refused = await viewer.evaluate(async (secret) => {
          const response = await fetch("/api/send", {
            method: "POST",
            headers: { "content-type": "application/json", "x-agentmail-token": secret },
            body: JSON.stringify({ to: "bob", body: "should not arrive" }),
          });
          return { status: response.status, body: await response.json() };
        }, token);
        expect(refused).toMatchObject({ status: 403, body: { error: { code: "read_only" } } });
        await viewer.close();
        expect((await world.am("bob", ["inbox", "--all", "--json"])).stdout).not.toContain("should not arrive");
      } finally {
        expect(await readOnly.stop()).toBe(0);
      }
    });
  });
}

describe("web --open", () => {
  test("the token is on no command line: the opener gets the path of a file only the user can read, which opens the room", async () => {
    const world = await RoomWorld.start("file", ["alice"]);
    const browser = await launchBrowser();
    try {
      // The desktop's opener, as a script that notes the command line it was given (what /proc shows every user).
      const bin = join(world.scratch, "bin");
      const noted = join(world.scratch, "opener-argv");
      mkdirSync(bin);
      writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\nprintf '%s\\n' "$0" "$@" > '${noted}.tmp' && mv '${noted}.tmp' '${noted}'\n`);
      chmodSync(join(bin, "xdg-open"), 0o755);
      const env = world.humanEnv({ PATH: `${bin}:${process.env.PATH}` });
      const web = new Running(["web", "--open", "--json"], env, world.repo.dir);
      let file = "";
      try {
        const { token } = JSON.parse(await web.line()) as { token: string };
        const argv = await waitUntil("the opener to run", () => (existsSync(noted) ? readFileSync(noted, "utf8") : null));
        expect(argv).not.toContain(token);
        file = argv.trim().split("\n")[1]!;
        expect(file).toStartWith("/");
        expect(statSync(file).mode & 0o777).toBe(0o600);
        expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
        const page = await browser.context.newPage();
        await page.goto(`file://${file}`);
        await page.waitForSelector('#agents tr[data-agent="alice"]');
        expect(page.url()).toContain(token);
      } finally {
        expect(await web.stop()).toBe(0);
      }
      expect(existsSync(dirname(file))).toBe(false);
      expect(await web.stderr).not.toContain("token=");
    } finally {
      await browser.close();
      await world.remove();
    }
  });
});

describe("the person's name, outside tmux", () => {
  let world: RoomWorld;
  beforeAll(async () => {
    world = await RoomWorld.start("file", ["alice", "bob"]);
  });
  afterAll(async () => {
    await world?.remove();
  });

  /** The person's registration as the room reads it (`watch --once --json`). */
  const personStatus = async () => {
    const once = await am(["watch", "--once", "--json"], { env: world.humanEnv(), cwd: world.repo.dir });
    return (JSON.parse(once.stdout) as { agents: { name: string; status: string | null }[] }).agents.find((agent) => agent.name === HUMAN)
      ?.status;
  };

  test("--as the name of an agent's window is refused, though that agent never registered and the view runs outside tmux", async () => {
    // carol works in a window of the agents' tmux server and has never run agentmail.
    world.tmux.addWindow("carol", world.repo.dir);
    for (const name of ["carol", "alice"]) {
      const refused = await am(["web", "--as", name], { env: world.humanEnv(), cwd: world.repo.dir });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`"${name}" is an agent's name, not yours to use`);
    }
    const once = await am(["watch", "--once", "--json"], { env: world.humanEnv(), cwd: world.repo.dir });
    expect(JSON.parse(once.stdout).agents.map((agent: { name: string }) => agent.name)).not.toContain("carol");
  });

  test("two views of the person: the first one's end leaves them ready; the last one's sets them offline", async () => {
    const first = new Running(["web", "--json"], world.humanEnv(), world.repo.dir);
    const second = new Running(["web", "--json"], world.humanEnv(), world.repo.dir);
    try {
      await first.line();
      await second.line();
      expect(await personStatus()).toBe("ready");
      expect(await first.stop()).toBe(0);
      expect(await personStatus()).toBe("ready");
    } finally {
      expect(await second.stop()).toBe(0);
    }
    expect(await personStatus()).toBe("offline");
  });
});

/**
 * The room a supervisor runs, on two projects of one tmux server: `app` (this repository: alice, bob, carol) and
 * `lib` (alice, librarian). The page is served from app, outside tmux, with small thresholds so that a check waits
 * for a condition, not for minutes; and with an observer's token.
 */
for (const engine of ["file", "redis"] as Engine[]) {
  describe(`the supervisor's room on the ${engine} store`, () => {
    let world: RoomWorld;
    let browser: Browser;
    let web: Running;
    let started: { url: string; token: string; observer_url: string; observer_token: string };
    let page: Page;

    beforeAll(async () => {
      world = await RoomWorld.start(engine, ["alice", "bob", "carol"], { project: "lib", agents: ["alice", "librarian"] });
      const env = world.humanEnv({ AGENTMAIL_STALLED_AFTER: "3s", AGENTMAIL_UNANSWERED_AFTER: "3s", AGENTMAIL_LOCK_TIMEOUT: "2" });
      web = new Running(["web", "--observer", "--json"], env, world.repo.dir);
      started = JSON.parse(await web.line());
      browser = await launchBrowser();
      page = await browser.context.newPage();
    });

    afterAll(async () => {
      await browser?.close();
      if (web) expect(await web.stop()).toBe(0);
      await world?.remove();
    });

    /** What the check of a To said, once it said it. */
    const checked = async () => {
      await page.locator("#to-check.ok, #to-check.error").waitFor();
      return page.locator("#to-check").textContent();
    };

    /** Writes from the compose page; returns the id the status line gives. */
    async function compose(to: string, body: string): Promise<string> {
      await page.goto(`${started.url}#/compose`);
      await page.fill('#compose-form input[name="to"]', to);
      await page.press('#compose-form input[name="to"]', "Enter");
      expect(await checked()).toMatch(/^reaches /);
      await page.fill('#compose-form textarea[name="body"]', body);
      await page.click('#compose-form button[type="submit"]');
      const status = page.locator("#status", { hasText: /^sent \w{8}$/ });
      await status.waitFor();
      return (await status.textContent())!.slice("sent ".length);
    }
    const received = async (agent: string) => JSON.parse((await world.am(agent, ["receive", "--json"])).stdout || "null");
    /** The person as another project's agents see them: `ana@<this project>`. */
    const personThere = () => `${HUMAN}@${world.projectNames.get("app")}`;

    test("a name two projects have reaches this project's agent; name@project and a list reach theirs, as the CLI resolves them", async () => {
      await page.goto(`${started.url}#/compose`);
      await page.fill('#compose-form input[name="to"]', "alice");
      await page.press('#compose-form input[name="to"]', "Enter");
      expect(await checked()).toBe("reaches alice");
      // On to the subject, as Enter in a form would not have done (it would have sent it).
      expect(await page.evaluate(() => document.activeElement?.getAttribute("name"))).toBe("subject");
      const toAlice = await compose("alice", "to app's alice");
      expect(await received("alice")).toMatchObject({ id: toAlice, from: HUMAN, message: "to app's alice" });
      expect(await received("alice@lib")).toBeNull();
      const toLib = await compose("alice@lib", "to lib's alice");
      expect(await received("alice@lib")).toMatchObject({ id: toLib, from: personThere(), message: "to lib's alice" });
      const toList = await compose("bob,librarian@lib", "to a list");
      expect(await received("bob")).toMatchObject({ id: toList, message: "to a list" });
      expect(await received("librarian@lib")).toMatchObject({ id: toList, from: personThere(), message: "to a list" });
      // A name no window of either project has is refused with the fix, and nothing is sent.
      await page.goto(`${started.url}#/compose`);
      await page.fill('#compose-form input[name="to"]', "alicia");
      await page.press('#compose-form input[name="to"]', "Enter");
      const refused = (await checked())!;
      expect(refused).toContain('"alice"');
      // The next step in the room's terms (mail/next-steps.ts), not the CLI's.
      expect(refused).toEndWith("pick a name from the room's agent list, or write name@project for another project's agent");
      expect(refused).not.toContain("agentmail recipients");
    });

    test("--all-projects shows every project's agents and mail on the tmux server, each with its project", async () => {
      const lib = world.projectNames.get("lib")!;
      const all = new Running(["web", "--all-projects", "--read-only", "--json"], world.humanEnv(), world.repo.dir);
      try {
        const { url } = JSON.parse(await all.line()) as { url: string };
        const room = (await (await fetch(url.replace("/?", "/api/room?"))).json()) as {
          agents: { name: string; project: string | null }[];
          feed: { mailbox: string; from: string; preview: string }[];
        };
        expect(room.agents).toContainEqual(expect.objectContaining({ name: "alice", project: world.projectNames.get("app") }));
        expect(room.agents).toContainEqual(expect.objectContaining({ name: `alice@${lib}`, project: lib }));
        expect(room.agents).toContainEqual(expect.objectContaining({ name: `librarian@${lib}`, project: lib }));
        expect(room.feed).toContainEqual(expect.objectContaining({ mailbox: `alice@${lib}`, preview: "to lib's alice" }));
        expect(room.feed).toContainEqual(expect.objectContaining({ mailbox: "alice", preview: "to app's alice" }));
      } finally {
        expect(await all.stop()).toBe(0);
      }
      const once = await am(["watch", "--once", "--all-projects"], { env: world.humanEnv(), cwd: world.repo.dir });
      expect(once.stdout).toMatch(/AGENT\s+PROJECT\s+STATUS/);
      expect(once.stdout).toMatch(/^ {2}librarian@/m);
      // The person's name in the other project (ana@app, the sender of what they wrote there) is the person.
      expect(once.stdout).not.toMatch(/^ {2}ana@/m);
    });

    // On Redis a project is a namespace across hosts: one whose agents have no window on this machine is in the room too.
    if (engine === "redis") {
      test("--all-projects on Redis shows every namespace's agents and mail, a namespace with no window here too", async () => {
        const far = "far-team";
        // lib's librarian window registers in a namespace of its own, as an agent of another host would.
        const elsewhere = world.env("librarian@lib", { AGENTMAIL_NAMESPACE: far, AGENTMAIL_HOST: "host-far" });
        expect((await am(["status", "ready"], { env: elsewhere, cwd: world.cwdOf("librarian@lib") })).code).toBe(0);
        expectSent(await world.am("alice", ["send", `librarian@${far}`, "to the far team"]));
        const all = new Running(["web", "--all-projects", "--read-only", "--json"], world.humanEnv(), world.repo.dir);
        try {
          const { url } = JSON.parse(await all.line()) as { url: string };
          const room = (await (await fetch(url.replace("/?", "/api/room?"))).json()) as {
            agents: { name: string; project: string | null; status: string | null }[];
            feed: { mailbox: string; preview: string }[];
          };
          expect(room.agents).toContainEqual(expect.objectContaining({ name: `librarian@${far}`, project: far, status: "ready" }));
          expect(room.agents).toContainEqual(expect.objectContaining({ name: `librarian@${world.projectNames.get("lib")}` }));
          expect(room.feed).toContainEqual(expect.objectContaining({ mailbox: `librarian@${far}`, preview: "to the far team" }));
        } finally {
          expect(await all.stop()).toBe(0);
        }
        const once = await am(["watch", "--once", "--all-projects", "--json"], { env: world.humanEnv(), cwd: world.repo.dir });
        const snapshot = JSON.parse(once.stdout) as { agents: { name: string; project: string | null }[]; feed: { mailbox: string }[] };
        expect(snapshot.agents).toContainEqual(expect.objectContaining({ name: `librarian@${far}`, project: far }));
        expect(snapshot.feed).toContainEqual(expect.objectContaining({ mailbox: `librarian@${far}` }));
      });
    }

    test("what needs the person fills as mail comes to them and questions wait, and empties as they are answered", async () => {
      await page.goto(started.url);
      await page.waitForSelector("#needs-section");
      // lib's librarian answers the person across projects: to ana@app.
      const fromLib = expectSent(await world.am("librarian@lib", ["send", personThere(), "--subject", "Index", "the index is rebuilt"]));
      const question = expectSent(await world.am("carol", ["send", "bob", "--needs-response", "--subject", "Ship it?", "ship on Friday?"]));
      await page.waitForSelector(`#needs tr[data-kind="to-you"][data-id="${fromLib}"]`);
      // Unanswered past the threshold (3 s here): then it needs the person.
      await page.waitForSelector(`#needs tr[data-kind="question"][data-id="${question}"]`);
      // One click from its thread, where the person replies: it is answered.
      await page.click(`#needs tr[data-id="${fromLib}"] td.preview a`);
      await page.waitForSelector(`#thread article[data-id="${fromLib}"]`);
      await page.fill("#reply-form textarea", "thanks");
      await page.click("#reply-form button[type=submit]");
      await page.locator("#status", { hasText: /^sent \w{8}$/ }).waitFor();
      expect(await received("librarian@lib")).toMatchObject({ from: personThere(), in_reply_to: fromLib, message: "thanks" });
      expectSent(await world.am("bob", ["reply", question, "yes, Friday"]));
      await page.goto(started.url);
      await waitUntil("the needs to empty", async () => (await page.locator("#needs tr[data-id]").count()) === 0);
      expect(await page.textContent("#needs")).toBe("Nothing needs you now.");
    });

    test("an agent with unread mail past the threshold and nothing read since is marked stalled, and unmarked once it reads", async () => {
      // bob's pane runs an agent CLI (a stand-in), not a shell: its mail waits for it, not for nobody.
      await startFakeAgent(world.tmux, "bob", fakeClaude(installFakeAgents(world.scratch)));
      while ((await received("bob")) !== null);
      await page.goto(started.url);
      expectSent(await world.am("alice", ["send", "bob", "are you there?"]));
      const bob = page.locator('#agents tr[data-agent="bob"][data-problem="stalled"]');
      await bob.waitFor();
      expect(await bob.locator(".reason").textContent()).toMatch(/1 unread message, the oldest for \d+s; nothing read since/);
      await page.click("#problems-only");
      const listed = await page
        .locator("#agents tr[data-agent]")
        .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-problem")));
      expect(listed).toContain("stalled");
      expect(listed.every((problem) => problem !== "")).toBe(true);
      await page.click("#problems-only");
      expect(await received("bob")).toMatchObject({ message: "are you there?" });
      await page.waitForSelector('#agents tr[data-agent="bob"][data-problem=""]');
      expect(await page.locator('#agents tr[data-agent="bob"] td.seen').textContent()).toMatch(/s ago · read$/);
    });

    test("claims show who holds what; the claim of an agent gone offline is released from the page, as the person, and its holder told", async () => {
      const claimed = await world.am("carol", ["claim", "src/auth/**", "--reason", "refactor"]);
      expect(claimed.code).toBe(0);
      expect((await world.am("alice", ["claim", "src/auth/login.ts"])).code).not.toBe(0);
      await page.goto(`${started.url}#/claims`);
      // The claims are looked at every few seconds: wait for the one that has alice waiting.
      const row = page.locator('#claims tr[data-holder="carol"]', { hasText: /alice$/ });
      await row.waitFor();
      // A claim of an hour made a moment ago has 1h left, or 59m once a second has passed.
      expect(await row.textContent()).toMatch(/src\/auth\/\*\*carolexclusiverefactor(\d+m|1h) leftalice/);
      expect(await row.locator("button").count()).toBe(0);
      // carol's session ends (its SessionEnd hook sets it offline): its claim no longer counts, the person may release it.
      expect((await world.am("carol", ["status", "offline"])).code).toBe(0);
      await page.waitForSelector('#claims tr[data-holder="carol"] button[data-action="release"]');
      await page.click('#claims tr[data-holder="carol"] button[data-action="release"]');
      await page.locator("#status", { hasText: /^done$/ }).waitFor();
      await page.waitForSelector("#claims:not(table)");
      const told = JSON.parse((await world.am("carol", ["inbox", "--json"])).stdout) as { from: string; subject: string }[];
      expect(told).toContainEqual(expect.objectContaining({ from: HUMAN, subject: "claim released: src/auth/**" }));
      const freed = JSON.parse((await world.am("alice", ["inbox", "--json"])).stdout) as { from: string; subject: string }[];
      expect(freed).toContainEqual(expect.objectContaining({ from: "agentmail", subject: "claim released: src/auth/**" }));
      // agentmail, which sent that notice, is no agent of the room.
      await page.goto(started.url);
      await page.waitForSelector('#agents tr[data-agent="alice"]');
      expect(await page.locator('#agents tr[data-agent="agentmail"]').count()).toBe(0);
    });

    test("the observer's link reads the room and is refused on every write; the person's page is unchanged", async () => {
      const observer = await browser.context.newPage();
      try {
        await observer.goto(`${started.observer_url}#/compose/bob`);
        await observer.waitForSelector("#write-note");
        expect(await observer.textContent("#who")).toContain("observer");
        await observer.goto(started.observer_url);
        await observer.waitForSelector('#agents tr[data-agent="librarian@lib"], #agents tr[data-agent="bob"]');
        const refused = await observer.evaluate(async (token) => {
          const answers: Record<string, unknown> = {};
          for (const path of ["/api/send", "/api/check", "/api/reply", "/api/ack", "/api/archive", "/api/release"]) {
            const response = await fetch(path, {
              method: "POST",
              headers: { "content-type": "application/json", "x-agentmail-token": token },
              body: JSON.stringify({ to: "bob", body: "observer wrote this", id: "x", mailbox: "ana" }),
            });
            answers[path] = [response.status, ((await response.json()) as { error: { code: string } }).error.code];
          }
          return answers;
        }, started.observer_token);
        for (const path of ["/api/send", "/api/check", "/api/reply", "/api/ack", "/api/archive", "/api/release"]) {
          expect(refused[path]).toEqual([403, "observer"]);
        }
      } finally {
        await observer.close();
      }
      expect((await world.am("bob", ["inbox", "--all", "--json"])).stdout).not.toContain("observer wrote this");
      const room = await (await fetch(`${started.url.replace("/?", "/api/room?")}`)).json();
      expect(room).toMatchObject({ readOnly: false, observer: false });
    });

    test("a send that fails keeps the message in the form and says why, whole; sent again once the store takes it", async () => {
      await page.goto(`${started.url}#/compose/bob`);
      await page.fill('#compose-form input[name="subject"]', "Kept");
      await page.fill('#compose-form textarea[name="body"]', "a draft worth keeping");
      const mend = await world.blockWrites("bob");
      try {
        await page.click('#compose-form button[type="submit"]');
        await page.locator("#status.status-error", { hasText: /^not sent: / }).waitFor();
      } finally {
        await mend();
      }
      expect(await page.inputValue('#compose-form input[name="subject"]')).toBe("Kept");
      expect(await page.inputValue('#compose-form textarea[name="body"]')).toBe("a draft worth keeping");
      // The whole error, wrapped within the page: no part of it cut off.
      const fits = await page.evaluate(() => {
        const status = document.getElementById("status")!;
        return status.scrollWidth <= status.clientWidth + 1 && status.getBoundingClientRect().right <= window.innerWidth;
      });
      expect(fits).toBe(true);
      await page.click('#compose-form button[type="submit"]');
      await page.waitForSelector("#thread");
      const inbox = JSON.parse((await world.am("bob", ["inbox", "--json"])).stdout) as { subject: string; message: string }[];
      expect(inbox.filter((message) => message.subject === "Kept").map((message) => message.message)).toEqual(["a draft worth keeping"]);
      // The outcome of a send belongs to its view: another view does not show it.
      await page.goto(`${started.url}#/claims`);
      await page.waitForSelector("#claims");
      expect(await page.textContent("#status")).not.toMatch(/sent|not sent/);
    });

    test("at 1280 px the tables fit the page; the person is listed by recipients, marked as a person", async () => {
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto(started.url);
      await page.waitForSelector('#agents tr[data-agent="bob"]');
      const overflow = await page.evaluate(() => {
        const out: string[] = [];
        if (document.documentElement.scrollWidth > window.innerWidth) out.push(`page ${document.documentElement.scrollWidth}`);
        for (const table of document.querySelectorAll("table")) {
          const box = table.getBoundingClientRect();
          const section = table.closest("section")!.getBoundingClientRect();
          if (box.right > section.right + 1 || box.right > window.innerWidth) out.push(`${table.id} ${box.right} > ${section.right}`);
        }
        return out;
      });
      expect(overflow).toEqual([]);
      const listed = JSON.parse((await world.am("alice", ["recipients", "--json"])).stdout) as { name: string; person?: boolean }[];
      expect(listed).toContainEqual(expect.objectContaining({ name: HUMAN, person: true }));
      expect((await world.am("alice", ["recipients"])).stdout).toMatch(new RegExp(`^${HUMAN} \\[person\\]`, "m"));
    });
  });
}

describe("watching the room from another machine", () => {
  test("through an SSH tunnel to the server's loopback: the observer's link reads, the person's writes; nothing listens elsewhere", async () => {
    const world = await RoomWorld.start("file", ["alice", "bob"]);
    const ssh = await SshServer.start();
    const browser = await launchBrowser();
    const web = new Running(["web", "--observer", "--json"], world.humanEnv(), world.repo.dir);
    try {
      const started = JSON.parse(await web.line()) as { port: number; token: string; observer_token: string };
      // The far machine runs `ssh -N -L <local>:127.0.0.1:<port> <this host>`: its own port, forwarded to our loopback.
      const tunnel = await ssh.tunnel(started.port);
      const far = `http://localhost:${tunnel.port}`;
      const page = await browser.context.newPage();
      await page.goto(`${far}/?token=${started.observer_token}`);
      await page.waitForSelector('#agents tr[data-agent="alice"]');
      expect(await page.textContent("#who")).toContain("observer");
      await page.waitForSelector("body[data-live='1']");
      // The person's own link through the same tunnel writes.
      await page.goto(`${far}/?token=${started.token}#/compose/bob`);
      await page.fill('#compose-form textarea[name="body"]', "through the tunnel");
      await page.click('#compose-form button[type="submit"]');
      await page.waitForSelector("#thread");
      expect(JSON.parse((await world.am("bob", ["receive", "--json"])).stdout)).toMatchObject({
        from: HUMAN,
        message: "through the tunnel",
      });
      // The server itself is on the loopback only: no other address of this machine answers on its port.
      for (const address of Object.values(networkInterfaces()).flat()) {
        if (!address || address.internal || address.family !== "IPv4") continue;
        const reached = await fetch(`http://${address.address}:${started.port}/`).then(
          () => true,
          () => false,
        );
        expect({ address: address.address, reached }).toEqual({ address: address.address, reached: false });
      }
      await tunnel.close();
    } finally {
      expect(await web.stop()).toBe(0);
      await browser.close();
      await ssh.stop();
      await world.remove();
    }
  });
});
