/** The team `bridge join` and `bridge leave` take. */
export const teamArg = {
  type: "positional",
  required: true,
  valueHint: "claude-team:team",
  description: "The team, as claude-team:TEAM",
  hintWhenMissing: "'agentmail bridge list' shows the bridged teams",
} as const;
