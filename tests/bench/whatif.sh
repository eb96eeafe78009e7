#!/bin/bash
# whatif.sh BUILD_DIR - npumem-whatif's default comparison with
# --min-capacity on contrib/traces/training.trace repeated to 1 M events,
# beside its baseline: one npumem-replay of the same file, the cost of a
# single row's replay. Then --jobs 2 against --jobs 1 (the same rows, in
# two processes at a time or one). Prints figures and the targets they
# are held to; fails only if something could not run.
set -u

build=${1:?usage: tests/bench/whatif.sh BUILD_DIR}
bin=$build/bin
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

for b in npumem-whatif npumem-replay; do
	[ -x "$bin/$b" ] || { echo "whatif: $bin/$b not built"; exit 1; }
done
sh "$here/repeat_loop.sh" "$here/../../contrib/traces/training.trace" 1000000 \
	>"$tmp/training_1m.trace" || exit 1

# seconds CMD...: wall time of one run, output kept in $tmp/out.
seconds() {
	local start end
	start=$(date +%s.%N)
	"$@" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; return 1; }
	end=$(date +%s.%N)
	echo "$end - $start" | bc -l
}

met() { # VALUE OP LIMIT
	if [ "$(echo "$1 $2 $3" | bc -l)" = 1 ]; then echo met; else echo "not met"; fi
}

events=$(grep -cv '^[[:space:]]*\(#\|$\|loop_start\)' "$tmp/training_1m.trace")
replay=$(seconds "$bin/npumem-replay" "$tmp/training_1m.trace") || exit 1
whole=$(seconds "$bin/npumem-whatif" --min-capacity "$tmp/training_1m.trace") || exit 1
rows=$(grep -c ' s$' "$tmp/out")
echo "npumem-whatif, default comparison with --min-capacity, $events events, $(nproc) CPUs:"
sed 's/^/  /' "$tmp/out"
printf '  %.2f s for %d rows (target: under 60 s on 2 cores: %s); one npumem-replay: %.3f s (x%.0f)\n' \
	"$whole" "$rows" "$(met "$whole" '<' 60)" "$replay" "$(echo "$whole / $replay" | bc -l)"

one=$(seconds "$bin/npumem-whatif" --jobs 1 --min-capacity --format json "$tmp/training_1m.trace") || exit 1
# What the searches replayed, against every replay running the whole trace.
if command -v jq >/dev/null; then
	jq -r --argjson n "$events" '"  capacity searches: \(map(.min_capacity_replays) | add) replays, " +
		"\(map(.min_capacity_events) | add) events (whole replays would be " +
		"\((map(.min_capacity_replays) | add) * $n): failing ones stop at their first OOM)"' "$tmp/out"
fi
two=$(seconds "$bin/npumem-whatif" --jobs 2 --min-capacity --format json "$tmp/training_1m.trace") || exit 1
ratio=$(echo "$two / $one" | bc -l)
printf '  --jobs 1: %.2f s, --jobs 2: %.2f s, ratio %.2f (target: at most 0.6 on 2 cores: %s)\n' \
	"$one" "$two" "$ratio" "$(met "$ratio" '<=' 0.6)"
