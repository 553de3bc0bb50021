import { defineCommand } from "./command.ts";

export default defineCommand({
  meta: { name: "mailman", description: "Type a reminder into the panes of ready agents that have unread mail" },
});
