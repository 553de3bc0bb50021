#!/usr/bin/env bash
# Live demo: a private tmux server with agent windows alice, bob and carol (a stand-in agent prompt) in a throwaway
# git repository. Commands are typed into the panes as an agent would type them: send, receive, a blocking wait, and
# the mailman reminding an idle agent. The screens and mailboxes are printed; everything is removed afterwards.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
bin_dir="$here/dist"
[ -x "$bin_dir/agentmail" ] || { echo "error: $bin_dir/agentmail is missing; run 'npm run build' first" >&2; exit 1; }
work=$(mktemp -d)
sock="$work/tmux.sock"
server() { env -u TMUX -u TMUX_PANE tmux -S "$sock" -f /dev/null "$@"; }
cleanup() { server kill-server 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

git init -q "$work/repo"
shell="env PATH=$bin_dir:$PATH PS1='\$ ' HISTFILE=/dev/null bash --norc --noprofile -i"
server new-session -d -s demo -n alice -x 100 -y 30 -c "$work/repo" "$shell"
server new-window -d -t demo: -n bob -c "$work/repo" "$shell"
# carol stands in for an agent CLI (demo/stand-in-agent.cjs): at its prompt it reads a line and says what it got, as a
# coding agent would take a prompt; the mailman types only into an agent CLI at its prompt. It registers first
# (`status ready`, as an agent's hooks do).
server new-window -d -t demo: -n carol -c "$work/repo" \
  "env PATH=$bin_dir:$PATH bash --norc --noprofile -c 'agentmail status ready; exec node \"$here/demo/stand-in-agent.cjs\" carol'"

step=0
# Types a command into a window's pane and presses Enter; the marker it prints afterwards tells when it finished.
start_in() {
  local window=$1 command=$2
  step=$((step + 1))
  server send-keys -t "demo:$window" -l -- "$command; printf '%s\n' \"dem\"\"o-$step\""
  server send-keys -t "demo:$window" Enter
}
# Waits until `pattern` (a whole line) shows in a window's pane.
wait_for() {
  local window=$1 pattern=$2
  for _ in $(seq 1 200); do
    server capture-pane -p -t "demo:$window" | grep -qx -- "$pattern" && return 0
    sleep 0.05
  done
  echo "error: '$pattern' did not show in $window within 10 s" >&2
  return 1
}
type_in() { start_in "$1" "$2"; wait_for "$1" "demo-$step"; }
screen() {
  printf '\n──── window %s ────\n' "$1"
  server capture-pane -p -J -S - -t "demo:$1" | grep -v '^demo-[0-9]*$' | sed -e 's/; printf .*$//' |
    awk 'NF { while (blank > 0) { print ""; blank-- } print; next } { blank++ }'
}

type_in alice 'agentmail recipients'
type_in alice 'agentmail send bob "PR #12 is ready for review"'
type_in alice 'echo "Also: the flaky test is tests/io.test.ts" | agentmail send bob'
type_in bob 'agentmail receive'
type_in bob 'agentmail receive --json'
type_in bob 'agentmail receive'
start_in bob 'agentmail receive --wait 30'
bob_waiting=$step
sleep 0.3
type_in alice 'agentmail send bob "Reviewed? CI is green now"'
wait_for bob "demo-$bob_waiting"
type_in bob 'agentmail send alice "Reviewed: two comments on PR #12"'
type_in alice 'agentmail receive'
type_in alice 'agentmail send bbo "typo"; echo "exit code $?"'
# The mailman puts mail in front of an agent through its agent CLI's own channel (Claude Code's inbox, Codex's
# control socket). The stand-in has none, so the demo opts carol into the last resort: a fixed reminder typed into
# the prompt of an idle agent that has unread mail.
type_in alice 'agentmail mailman --daemon --sweep 0.5 --typing carol'
type_in alice 'agentmail send carol "Please rebase on main"'
wait_for carol '(carol takes the prompt: agentmail: 1 unread message. Run agentmail receive.)'
type_in alice 'agentmail mailman status'
type_in alice 'agentmail mailman stop'

screen alice
screen bob
screen carol
printf '\nThe mailboxes (in the repository'"'"'s git dir):\n'
for mailbox in "$work/repo/.git/mail/"*.jsonl; do printf '%s\n' "── ${mailbox#"$work/repo/"}"; cat "$mailbox"; done
