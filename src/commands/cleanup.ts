import { defineCommand } from "./command.ts";

export default defineCommand({
  meta: { name: "cleanup", description: "Forget stale agents, drop old read messages, remove empty mailboxes" },
});
