#!/usr/bin/env bash
# Regenerates docs/screen.svg, the README's picture of the dashboard: the
# real program running `countertop demo` in a tmux server of its own at
# 120x40, captured with its colours once the demo's traffic shows (a
# rate, a stuck key), and drawn by charmbracelet/freeze. freeze runs
# through `go run pkg@version`, so it never enters go.mod.
# Needs tmux; `make screenshot` runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

FREEZE=github.com/charmbracelet/freeze@v0.2.2
out=docs/screen.svg
tmp=$(mktemp -d)
sock="$tmp/tmux.sock"
tmux() { command tmux -S "$sock" -f /dev/null "$@"; }
cleanup() { tmux kill-server 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

command -v tmux >/dev/null || { echo "screenshot: tmux is not installed (apt-get install tmux)" >&2; exit 1; }
go build -o "$tmp/countertop" .
tmux new-session -d -s shot -x 120 -y 40 \
	"env TERM=xterm-256color COLORTERM=truecolor $tmp/countertop demo"

# Poll, with a deadline, until the demo's clients have run long enough for
# rates to show, a counter to be stuck, and TREND to hold most of a minute
# (six spans of 7.5 s) on a few rows.
deadline=$((SECONDS + 120))
until tmux capture-pane -p -t shot | grep -q 'stuck' &&
	[ "$(tmux capture-pane -p -t shot | grep -cE '\+[0-9.]+/s')" -ge 4 ] &&
	[ "$(tmux capture-pane -p -t shot | grep -cE '[▁▂▃▄▅▆▇█]{6}  (counter|window|log|bucket) ')" -ge 4 ]; do
	if ((SECONDS > deadline)); then
		echo "screenshot: the demo did not show its traffic within 120s; the screen was:" >&2
		tmux capture-pane -p -t shot >&2
		exit 1
	fi
	sleep 0.5
done
tmux capture-pane -p -e -t shot >"$tmp/screen.ansi"
tmux send-keys -t shot q

go run "$FREEZE" --language ansi --window --theme dracula \
	--font.family "JetBrains Mono, DejaVu Sans Mono, Menlo, monospace" \
	--padding 20 --margin 0 --border.radius 8 \
	--output "$out" "$tmp/screen.ansi"
echo "wrote $out ($(wc -c <"$out") bytes)"
