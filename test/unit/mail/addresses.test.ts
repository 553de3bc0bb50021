/** Addresses without I/O: parsing every form, the rules for names, and how addresses become mailboxes. */
import { describe, expect, test } from "bun:test";
import {
  addressProblem,
  isRoleAddress,
  nameProblem,
  parseAddress,
  parseAddresses,
  roleAddress,
  roleOfAddress,
  validateName,
} from "../../../src/mail/addresses.ts";
import { defineCommand, resolveCommand } from "../../../src/cli/definitions.ts";
import { strictArgs } from "../../../src/cli/strict-args.ts";
import { planCopies, type AddressBook, type Window } from "../../../src/mail/copy-plan.ts";
import { AgentmailError } from "../../../src/mail/errors.ts";
import { tmuxLiteral } from "../../../src/tmux/rename.ts";

function failure(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AgentmailError);
    return { code: (error as AgentmailError).code, message: (error as AgentmailError).message };
  }
  throw new Error("expected a failure");
}

describe("parseAddresses", () => {
  test("every form: a window, a list, @all, @GROUP, role:ROLE and another system's scheme", () => {
    expect(parseAddresses(["bob"])).toEqual([{ kind: "agent", name: "bob" }]);
    expect(parseAddresses(["alice,bob smith", "ünï cödé"])).toEqual([
      { kind: "agent", name: "alice" },
      { kind: "agent", name: "bob smith" },
      { kind: "agent", name: "ünï cödé" },
    ]);
    expect(parseAddress("@all")).toEqual({ kind: "all" });
    expect(parseAddress("@reviewers")).toEqual({ kind: "group", name: "reviewers" });
    expect(parseAddress("role:triage")).toEqual({ kind: "role", role: "triage" });
    expect(parseAddress("ROLE:triage")).toEqual({ kind: "role", role: "triage" });
    expect(parseAddress("feat124:bob")).toEqual({ kind: "bridge", scheme: "feat124", target: "bob" });
    expect(parseAddress("dmail:a:b")).toEqual({ kind: "bridge", scheme: "dmail", target: "a:b" });
    expect(roleAddress("triage")).toBe("role:triage");
  });

  test("hostile window names stay names; nothing is deduplicated before resolving", () => {
    for (const name of ["-x", "2", "a.b", "../evil", "$(touch x)", " lead", "tab\there"])
      expect(parseAddress(name)).toEqual({ kind: "agent", name });
    expect(parseAddresses(["bob,bob"])).toHaveLength(2);
  });

  test("empty parts, a bare @ or role:, and a ':' that starts no scheme are errors naming the forms", () => {
    expect(failure(() => parseAddresses([])).message).toStartWith("missing recipient; give a window name, a,b,c, @all");
    expect(failure(() => parseAddresses(["a,,b"])).code).toBe("usage");
    expect(failure(() => parseAddresses(["a,"])).message).toStartWith("an address is empty");
    expect(failure(() => parseAddress("@")).message).toBe("'@' alone is no address; give @all or @GROUP");
    expect(failure(() => parseAddress("role:")).message).toBe("'role:' needs a role's name: role:ROLE");
    expect(failure(() => parseAddress("a b:c")).message).toContain("a window name cannot hold ':'");
    expect(failure(() => parseAddress(":x")).code).toBe("usage");
    expect(failure(() => parseAddress("@a\u001bb"))).toEqual({
      code: "invalid_name",
      message: '"a\\x1bb" is no group name: it holds a control character',
    });
    expect(failure(() => parseAddress("role:-x")).message).toContain("it starts with '-'");
  });
});

describe("names of agents, groups and roles", () => {
  test("the rules: not blank, no controls, at most 64 characters, no leading - or @, no , : backslash or #[", () => {
    expect(nameProblem("reviewer")).toBeNull();
    expect(nameProblem("bob smith")).toBeNull();
    expect(nameProblem("ünï cödé 🚀")).toBeNull();
    expect(nameProblem("a".repeat(64))).toBeNull();
    expect(nameProblem("🚀".repeat(64))).toBeNull();
    expect(nameProblem("")).toBe("it is empty");
    expect(nameProblem("   ")).toBe("it is empty");
    expect(nameProblem("a\nb")).toBe("it holds a control character");
    expect(nameProblem("a\u009bb")).toBe("it holds a control character");
    expect(nameProblem("a".repeat(65))).toBe("it is 65 characters long, over the limit of 64");
    expect(nameProblem("-x")).toContain("'-'");
    expect(nameProblem("@x")).toContain("'@'");
    expect(nameProblem("a,b")).toContain("','");
    expect(nameProblem("a:b")).toContain("':'");
    expect(nameProblem("a\\b")).toContain("'\\'");
    expect(nameProblem("x #[fg=red]y")).toBe("it holds '#[', which tmux reads as a style");
    expect(nameProblem("x #y [z]")).toBeNull();
  });

  test("a window's name stands for an agent unless it reads as another address (addressProblem)", () => {
    for (const name of ["bob", "-x", "back\\slash", "tab\there", "x #[y]", "2"]) expect(addressProblem(name)).toBeNull();
    expect(addressProblem("role:triage")).toBe("it holds ':', which starts an address scheme (role:ROLE)");
    expect(addressProblem("feat124:x")).toContain("':'");
    expect(addressProblem("a,b")).toBe("it holds ',', which separates addresses");
    expect(addressProblem("@devs")).toBe("it starts with '@', which addresses a group");
    expect(addressProblem(" ")).toBe("it is empty");
  });

  test("validateName names the kind, and a group cannot be called all", () => {
    expect(validateName("agent", "bob")).toBe("bob");
    expect(failure(() => validateName("agent", "a,b"))).toEqual({
      code: "invalid_name",
      message: `"a,b" cannot be an agent's name: it holds ',', which separates addresses; choose another`,
    });
    expect(failure(() => validateName("group", "all")).message).toContain("@all already means every agent window");
    expect(failure(() => validateName("role", "")).message).toStartWith(`"" cannot be a role's name: it is empty`);
  });

  test("tmux gets the name literally: # doubled (no format, no #(command)), a trailing ; escaped", () => {
    expect(tmuxLiteral("bob smith")).toBe("bob smith");
    expect(tmuxLiteral("#(touch x)#{pane_id}")).toBe("##(touch x)##{pane_id}");
    expect(tmuxLiteral("a;")).toBe("a\\;");
    expect(tmuxLiteral("a;b")).toBe("a;b");
    // tmux keeps a run of # before [ as it is (a style), so it goes as it is.
    expect(tmuxLiteral("x #[y] ##[z] #a")).toBe("x #[y] ##[z] ##a");
  });
});

describe("role queues among mailboxes", () => {
  test("a role's queue is told from an agent's mailbox, and gives back its role", () => {
    for (const role of ["dev", "role", "a:b"]) {
      expect(isRoleAddress(roleAddress(role))).toBe(true);
      expect(roleOfAddress(roleAddress(role))).toBe(role);
    }
    for (const name of ["dev", "roles", "role", "Role:dev", "x-role:dev", "bob@app"]) {
      expect(isRoleAddress(name)).toBe(false);
      expect(roleOfAddress(name)).toBeNull();
    }
  });
});

describe("planCopies", () => {
  const windows: Window[] = [
    { name: "alice", you: true, auto: false },
    { name: "bob", you: false, auto: false },
    { name: "bob smith", you: false, auto: false },
    { name: "bash", you: false, auto: true },
  ];
  const book = (extra: Partial<AddressBook> = {}): AddressBook => ({
    caller: "alice",
    windows,
    groups: () =>
      new Map([
        ["devs", ["alice", "bob", "bob smith"]],
        ["gone", ["bob", "carol"]],
        ["me", ["alice"]],
      ]),
    roles: () =>
      new Map([
        ["triage", ["bob", "alice"]],
        ["solo", ["alice"]],
        ["empty", []],
      ]),
    ...extra,
  });
  const plan = (...values: string[]) => planCopies(parseAddresses(values), book());

  test("a list: each recipient once, in the order given; the sender gets no copy of a list", () => {
    expect(plan("bob,bob smith,bob", "alice")).toEqual({ agents: ["bob", "bob smith"], roles: [], warnings: [] });
  });

  test("addressed alone, the sender writes to itself", () => {
    expect(plan("alice").agents).toEqual(["alice"]);
  });

  test("@all: every other window, leaving out names tmux chose, with a warning naming them", () => {
    const all = plan("@all");
    expect(all.agents).toEqual(["bob", "bob smith"]);
    expect(all.warnings).toEqual([
      `@all left out windows whose name tmux chose, which change with their program: "bash"; ` +
        "to reach one, run in it: agentmail name <name>",
    ]);
  });

  test("a group reaches its members but the sender; a member that is no window stops the whole send", () => {
    expect(plan("@devs").agents).toEqual(["bob", "bob smith"]);
    expect(failure(() => plan("bob", "@gone"))).toEqual({
      code: "unknown_recipient",
      message: 'group "gone" has member "carol", which is no window of this tmux session; remove it: agentmail group remove gone carol',
    });
    expect(failure(() => plan("@dvs")).message).toBe(
      `no group named "dvs"; did you mean "@devs"? run 'agentmail group list' to list the groups`,
    );
    expect(failure(() => plan("@me")).message).toStartWith("no one to send to: no other agent window is addressed");
  });

  test("a role is one queue; it needs a member besides the sender", () => {
    expect(plan("role:triage", "bob")).toEqual({ agents: ["bob"], roles: ["triage"], warnings: [] });
    expect(plan("role:triage,role:triage").roles).toEqual(["triage"]);
    expect(failure(() => plan("role:empty")).message).toBe(
      `role "empty" has no members, so no one would take the message; members join it with: agentmail join empty`,
    );
    expect(failure(() => plan("role:nobody")).code).toBe("unknown_recipient");
    expect(failure(() => plan("role:solo")).message).toStartWith(`you are the only member of role "solo"`);
  });

  test("a role no one joined that is a typo of one with members: did you mean it, worded per interface", () => {
    let thrown: unknown;
    try {
      plan("role:triag");
    } catch (error) {
      thrown = error;
    }
    const error = thrown as AgentmailError;
    expect(error.code).toBe("unknown_recipient");
    expect(error.message).toBe(`role "triag" has no members; did you mean "role:triage"? run 'agentmail roles' to list the roles`);
    expect(error.wordedFor("mcp")).toBe(`role "triag" has no members; did you mean "role:triage"? call list-recipients to list the roles`);
    // A role with no members is never suggested: it would fail the same way.
    expect(failure(() => plan("role:empt")).message).toStartWith(`role "empt" has no members, so no one would take the message`);
  });

  test("one unknown name fails the whole list with the closest names; a name tmux chose is sent to with a warning", () => {
    expect(failure(() => plan("bob,bobb smith"))).toEqual({
      code: "unknown_recipient",
      message:
        `no window named "bobb smith" in this tmux session; did you mean "bob smith", "bob"? ` + "run 'agentmail recipients' to list them",
    });
    const auto = plan("bash");
    expect(auto.agents).toEqual(["bash"]);
    expect(auto.warnings[0]).toStartWith(`"bash" is a name tmux chose`);
    expect(auto.warnings[0]).toEndWith("run in that window: agentmail name <name>");
  });

  test("another system's scheme is refused until a bridge handles it; groups and roles are read only when addressed", () => {
    expect(failure(() => plan("roo:bob")).message).toBe(
      `"roo:" is no address scheme agentmail knows; use a window name, @all, @GROUP or role:ROLE`,
    );
    const untouched = () => {
      throw new Error("read");
    };
    expect(planCopies(parseAddresses(["bob"]), book({ groups: untouched, roles: untouched })).agents).toEqual(["bob"]);
  });
});

describe("repeatable arguments", () => {
  const command = defineCommand({
    meta: { name: "x" },
    args: {
      group: { type: "positional", required: false },
      member: { type: "positional", required: false, multiple: true },
      recipient: { type: "string", alias: "r", multiple: true },
    },
  });
  const parse = async (argv: string[]) => strictArgs(argv, await resolveCommand(command), "agentmail x").args;

  test("a multiple flag collects every value; a multiple last positional takes the rest, none given an empty list", async () => {
    expect((await parse(["-r", "a", "--recipient", "b", "-r=c"])).recipient as unknown).toEqual(["a", "b", "=c"]);
    expect(await parse(["devs", "alice", "bob smith"])).toMatchObject({ group: "devs", member: ["alice", "bob smith"] });
    expect((await parse(["devs"])).member).toEqual([]);
  });
});
