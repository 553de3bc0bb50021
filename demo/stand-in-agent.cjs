// The demo's stand-in for an agent CLI. It titles itself `claude`, as Claude Code from npm does, so the mailman
// (which types only into an agent CLI at its prompt, never into a shell) counts it as one; at its prompt it reads a
// line and says what it got, as a coding agent would take a prompt.
const readline = require("node:readline");

process.title = "claude";
const name = process.argv[2] || "agent";
const prompt = readline.createInterface({ input: process.stdin, output: process.stdout, prompt: `${name}> ` });
prompt.on("line", (line) => {
  console.log(`(${name} takes the prompt: ${line})`);
  prompt.prompt();
});
prompt.prompt();
