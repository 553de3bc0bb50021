#!/usr/bin/env bash
# Live demo: a private tmux server with two agent windows, alice and bob, in a throwaway git repository. Commands
# are typed into their panes as an agent would type them; both screens are printed; everything is removed after.
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

step=0
# Types a command into a window's pane, presses Enter, and waits until it has finished.
type_in() {
  local window=$1 command=$2
  step=$((step + 1))
  server send-keys -t "demo:$window" -l -- "$command; printf '%s\n' \"dem\"\"o-$step\""
  server send-keys -t "demo:$window" Enter
  for _ in $(seq 1 100); do
    server capture-pane -p -t "demo:$window" | grep -qx "demo-$step" && return 0
    sleep 0.05
  done
  echo "error: '$command' did not finish in $window within 5 s" >&2
  return 1
}
screen() {
  printf '\n──── window %s ────\n' "$1"
  server capture-pane -p -J -t "demo:$1" | grep -v '^demo-[0-9]*$' | sed -e 's/; printf .*$//' |
    awk 'NF { while (blank > 0) { print ""; blank-- } print; next } { blank++ }'
}

type_in alice 'agentmail send bob "PR #12 is ready for review"'
type_in alice 'echo "Also: the flaky test is tests/io.test.ts" | agentmail send bob'
type_in bob 'agentmail receive'
type_in bob 'agentmail receive --json'
type_in bob 'agentmail receive'
type_in bob 'agentmail send alice "Reviewed: two comments on PR #12"'
type_in alice 'agentmail receive'
type_in alice 'agentmail send bbo "typo"; echo "exit code $?"'

screen alice
screen bob
printf '\nThe mailboxes (in the repository'"'"'s git dir):\n'
for mailbox in "$work/repo/.git/mail/"*.jsonl; do printf '%s\n' "── ${mailbox#"$work/repo/"}"; cat "$mailbox"; done
