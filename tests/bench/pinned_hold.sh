#!/bin/sh
# pinned_hold.sh BUILD_DIR - the pinned bytes each host variant holds on a
# data loader's traffic (npumem-gentrace pinned-loader: batches of 40 to
# 320 MiB pinned 2 steps ahead, copied on stream 1, 200 steps, seed 42),
# and on 20 GiB batches: the peak the pinned cache held (host
# allocated_bytes.peak) beside the peak the live pins asked for, side by
# side for the default variant, the default with
# pinned_max_round_threshold_mb:64 and pin_memory_expandable_segments.
# Prints figures; fails only if a replay could not run.
set -u

bin=${1:?usage: tests/bench/pinned_hold.sh BUILD_DIR}/bin
trace=$(mktemp) || exit 1
trap 'rm -f "$trace"' EXIT

# held CONF: "HELD_PEAK REQUESTED_PEAK" of one replay of $trace.
held() {
	"$bin/npumem-replay" ${1:+--alloc-conf "$1"} --format stats "$trace" 2>/dev/null |
		awk '$1 == "host_memory_stats.allocated_bytes.peak" { h = $2 }
		     $1 == "pinned_requested_bytes.peak" { r = $2 }
		     END { if (h == "" || r == "") exit 1; print h, r }'
}

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b ? a / b : 0 }'; }

status=0
for workload in "loader 40..320 MiB:--seed 42" \
		"loader 20 GiB:--seed 42 --batch 20GiB --batch-min 20GiB --prefetch 0 --steps 3"; do
	name=${workload%%:*}
	# shellcheck disable=SC2086
	"$bin/npumem-gentrace" pinned-loader ${workload#*:} --out "$trace" || { status=1; continue; }
	echo "pinned_hold: $name, MiB"
	printf '%-40s %14s %14s %10s %12s\n' variant "held peak" "asked peak" "held/asked" "vs default"
	base=
	for conf in "" pinned_max_round_threshold_mb:64 pin_memory_expandable_segments:True; do
		set -- $(held "$conf") || { status=1; continue; }
		[ -n "$base" ] || base=$1
		printf '%-40s %14s %14s %10s %12s\n' "${conf:-default}" "$(mib "$1")" "$(mib "$2")" \
			"$(ratio "$1" "$2")" "$(ratio "$1" "$base")"
	done
	echo
done
exit $status
