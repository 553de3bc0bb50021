/**
 * What to do next, worded for the interface an error reaches: a person or agent at the command line runs commands;
 * an agent talking to `agentmail mcp` calls tools and cannot type `agentmail …` into its own pane; the person in the
 * mail room (`watch`, `web`) picks from what the room shows and writes from its compose, outside any agent's window.
 * An error names its next step by key (see errorWithNextStep); each interface shows that step in its own words.
 */
export type Surface = "cli" | "mcp" | "room";

export const NEXT_STEPS = {
  listRecipients: {
    cli: "run 'agentmail recipients' to list them",
    mcp: "call list-recipients to list them",
    room: "pick a name from the room's agent list, or write name@project for another project's agent",
  },
  listEveryProject: {
    cli: "run 'agentmail recipients --all' to list every project's agents",
    mcp: "call list-recipients with all set to list every project's agents",
    room: "a room started with --all-projects lists every project's agents, each as name@project",
  },
  listGroups: {
    cli: "run 'agentmail group list' to list the groups",
    mcp: "call list-recipients to list the groups",
    room: "the groups are listed in a shell: agentmail group list",
  },
  listRoles: {
    cli: "run 'agentmail roles' to list the roles",
    mcp: "call list-recipients to list the roles",
    room: "the roles are listed in a shell: agentmail roles",
  },
  giveMessage: {
    cli: "give it as an argument, with -m, or on stdin",
    mcp: "pass the text in the message argument",
    room: "write the message, then send it",
  },
  runInTmux: {
    cli: "run agentmail from a pane of a tmux session",
    mcp: "start the agent, and with it this MCP server, in a pane of a tmux session",
    room: "do it from the agent's own window, a pane of a tmux session",
  },
  runInLivePane: {
    cli: "run agentmail from a live tmux pane",
    mcp: "restart the agent, and with it this MCP server, in a live tmux pane",
    room: "do it from the agent's own window, a live tmux pane",
  },
  installTmux: {
    cli: "install tmux and run agentmail inside a tmux pane",
    mcp: "install tmux and start the agent inside a tmux pane",
    room: "install tmux and start the agents in tmux windows",
  },
  nameWindow: {
    cli: "name this window: agentmail name <name>",
    mcp: "name the agent's window: run 'agentmail name <name>' in the agent's shell",
    room: "name the agent's window: agentmail name <name>, run in that window",
  },
  pickOtherName: {
    cli: "pick another name for this window: agentmail name <other-name>",
    mcp: "name the agent's window another name: run 'agentmail name <other-name>' in the agent's shell",
    room: "name that window another name: agentmail name <other-name>, run in that window",
  },
  runInRepository: {
    cli: "run agentmail inside the repository, or set AGENTMAIL_DIR to a directory to keep mail in",
    mcp: "start the agent inside the repository, or set AGENTMAIL_DIR in the MCP server's environment",
    room: "start the view inside the repository, or with AGENTMAIL_DIR set to the directory the mail is kept in",
  },
  retryAfterOwnCall: {
    cli: "retry once that call has finished",
    mcp: "call the tool again once your other call has returned",
    room: "send it again once your other send has finished",
  },
  checkSent: {
    cli: "check 'agentmail sent' for it before sending it again",
    mcp: "call the sent tool to check for it before sending it again",
    room: "look for it in the room's mail before sending it again",
  },
  askHolderOrWait: {
    cli: 'ask the holder to release it (agentmail send <holder> "…"), or wait for it (agentmail claim <path> --wait SECONDS)',
    mcp: "ask the holder to release it (the send tool), or wait for it (the claim tool with wait_seconds)",
    room: "write to the holder to ask them to release it, or wait for it in the room's claims",
  },
} as const satisfies Record<string, Record<Surface, string>>;

export type NextStep = keyof typeof NEXT_STEPS;

/** A reason and a step in one sentence: `reason; step`, or `reason? step` after a question. */
export function withStep(reason: string, step: string): string {
  return reason.endsWith("?") ? `${reason} ${step}` : `${reason}; ${step}`;
}

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** Quotes a word for a POSIX shell when it needs quoting: `agentmail` stays as it is, `/opt/my tools/agentmail` does not. */
export function shellQuote(word: string): string {
  return SAFE_WORD.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
