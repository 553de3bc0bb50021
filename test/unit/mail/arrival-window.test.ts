/**
 * The budget across arrivals (src/mail/arrival-window.ts): in one window per agent, all arrivals together show at
 * most N messages whole and K characters of them; an arrival that could only list mail waits until the burst ends.
 */
import { describe, expect, test } from "bun:test";
import { allowanceOf, listDue, newestOf, parseWindow, QUIET_MS, windowAfter } from "../../../src/mail/arrival-window.ts";
import { composeMail, DEFAULT_BUDGET, frameText, LIST_RESERVE } from "../../../src/mail/frame.ts";
import { createMessage } from "../../../src/mail/message.ts";

const budget = DEFAULT_BUDGET;
const T = 1_800_000_000_000;

describe("the arrival window", () => {
  test("the first arrival opens it with the whole budget; what it shows is taken from the next ones'", () => {
    expect(allowanceOf(null, budget, T)).toEqual({ messages: 5, chars: 4000, opens: true });
    const window = windowAfter(null, budget, T, 3, 900);
    expect(window).toEqual({ since: T, shown: 3, chars: 900 });
    expect(allowanceOf(window, budget, T + 1000)).toEqual({ messages: 2, chars: 3100, opens: false });
    const spent = windowAfter(window, budget, T + 1000, 2, 700);
    expect(allowanceOf(spent, budget, T + 2000)).toEqual({ messages: 0, chars: 2400, opens: false });
    // Once it has lasted windowMs, the next arrival opens a new one.
    expect(allowanceOf(spent, budget, T + budget.windowMs)).toEqual({ messages: 5, chars: 4000, opens: true });
    expect(windowAfter(spent, budget, T + budget.windowMs, 1, 50)).toEqual({ since: T + budget.windowMs, shown: 1, chars: 50 });
  });

  test("a burst of 50 in five arrivals: five messages whole in all, the rest listed or counted", () => {
    const messages = Array.from({ length: 50 }, (_, i) =>
      createMessage("alice", "bob", `Burst message ${i}: ${"details ".repeat(25)}`, new Date()),
    );
    let window = null;
    const kinds: string[] = [];
    for (let arrival = 0; arrival < 5; arrival++) {
      const now = T + arrival * 2000;
      const allowance = allowanceOf(window, budget, now);
      const composed = frameText("bob", messages.slice(arrival * 10, arrival * 10 + 10), budget, allowance);
      const shown = [...composed.shown.values()];
      kinds.push(...shown);
      window = windowAfter(window, budget, now, shown.filter((kind) => kind === "whole" || kind === "cut").length, composed.shownChars);
    }
    expect(kinds.length).toBe(50);
    expect(kinds.filter((kind) => kind === "whole").length).toBe(5);
    expect(kinds.filter((kind) => kind === "cut").length).toBe(0);
  });

  test("with the window's messages spent, a composition only lists; in a new window the first is always shown", () => {
    const messages = [createMessage("alice", "bob", "one", new Date()), createMessage("alice", "bob", "two", new Date())];
    const listed = composeMail(messages, budget, budget.chars, { messages: 0, chars: 0, opens: false });
    expect([...listed.shown.values()]).toEqual(["listed", "listed"]);
    expect(listed.shownChars).toBe(0);
    expect(listed.text).toStartWith("(2 more unread, not shown here: run agentmail receive to read each)\n");
    // Characters left, but too few for a whole message and not a new window: listed too.
    const long = createMessage("alice", "bob", "x".repeat(2000), new Date());
    expect([...composeMail([long], budget, budget.chars, { messages: 3, chars: 100, opens: false }).shown.values()]).toEqual(["listed"]);
    expect([...composeMail([long], budget, budget.chars, { messages: 5, chars: 100, opens: true }).shown.values()]).toEqual(["cut"]);
  });

  test("once the window's characters are spent, the rest is a count with a subject or two, not another long list", () => {
    const messages = Array.from({ length: 50 }, (_, i) =>
      createMessage("alice", "bob", `message ${i}`, new Date(), { subject: `Subject ${i}` }),
    );
    const spent = composeMail(messages, budget, budget.chars, { messages: 0, chars: 0, opens: false });
    expect(spent.text.length).toBeLessThanOrEqual(LIST_RESERVE);
    expect(spent.text).toStartWith("(50 more unread, not shown here: run agentmail receive to read each)\n- ");
    expect(spent.text).toMatch(/- and \d+ more \(agentmail inbox lists them\)\n$/);
    expect([...spent.shown.values()].every((kind) => kind === "listed" || kind === "counted")).toBe(true);
    // With characters left in the window, the list may use them.
    expect(composeMail(messages, budget, budget.chars, { messages: 0, chars: 2000, opens: false }).text.length).toBeGreaterThan(
      LIST_RESERVE,
    );
  });

  test("an arrival that could only list waits until no mail came for QUIET_MS, and at most until the window closes", () => {
    const window = { since: T, shown: 5, chars: 3000 };
    expect(listDue(window, budget, T + 10_000, T + 10_500)).toBe(T + 10_000 + QUIET_MS);
    expect(listDue(window, budget, T + 10_000, T + 10_000 + QUIET_MS)).toBeNull();
    expect(listDue(window, budget, T + 59_500, T + 59_600)).toBe(T + budget.windowMs);
    expect(listDue(null, budget, T, T)).toBeNull();
    expect(listDue(window, budget, T + 70_000, T + 70_000)).toBeNull();
  });

  test("the newest of some messages, and a window read back from its file", () => {
    expect(newestOf([{ created_at: "2026-01-01T00:00:01.000Z" }, { created_at: "2026-01-01T00:00:03.000Z" }, {}])).toBe(
      Date.parse("2026-01-01T00:00:03.000Z"),
    );
    expect(newestOf([])).toBe(0);
    expect(parseWindow('{"since":1,"shown":2,"chars":3}')).toEqual({ since: 1, shown: 2, chars: 3 });
    expect(parseWindow('{"since":1,"shown":"2","chars":3}')).toBeNull();
    expect(parseWindow("torn")).toBeNull();
  });
});
