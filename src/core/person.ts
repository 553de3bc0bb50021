/**
 * A person (the human running the agents) in the registry: `watch` and `web` register them under their name with
 * this in place of a pane id (which is always `%N`, so no agent's pane can be it). Such an entry makes the name
 * addressable by every agent, from any window or host, though no window has it: see actions/send.ts.
 */
export const PERSON_PANE = "person";
