#!/bin/sh
# graph_pools.sh BUILD_DIR - what graphs hold on the decode-graphs workload
# (a TinyLlama-sized model, one graph per vLLM capture size 1..256, 100
# decode steps): peak reserved bytes and the bytes held by graph pools with
# one shared pool (vLLM's default), with a pool per graph, and decoding
# eagerly without graphs, side by side, in both flavors. Prints figures;
# fails only if a replay could not run.
set -u

bin=${1:?usage: tests/bench/graph_pools.sh BUILD_DIR}/bin
trace=$(mktemp) || exit 1
trap 'rm -f "$trace"' EXIT

# replay FLAVOR GENTRACE_ARGS...: "RESERVED_PEAK POOL_BYTES" of one replay.
replay() {
	flavor=$1
	shift
	"$bin/npumem-gentrace" decode-graphs "$@" --out "$trace" || return 1
	peak=$("$bin/npumem-replay" --flavor "$flavor" --format stats "$trace" 2>/dev/null |
		awk '$1 == "reserved_bytes.all.peak" { print $2 }')
	pools=$("$bin/npumem-replay" --flavor "$flavor" "$trace" 2>/dev/null |
		sed -n 's/^graph pools hold \([0-9]*\) bytes$/\1/p')
	[ -n "$peak" ] || return 1
	echo "$peak ${pools:-0}"
}

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b ? a / b : 0 }'; }

echo "graph_pools: decode-graphs (batches 1..256, 100 steps), MiB"
printf '%-6s %-18s %14s %14s %12s\n' flavor mode "reserved peak" "graph pools" "vs eager"
status=0
for flavor in npu cuda; do
	set -- $(replay "$flavor" --graphs no) || { status=1; continue; }
	eager=$1
	printf '%-6s %-18s %14s %14s %12s\n' "$flavor" "eager (no graphs)" "$(mib "$1")" "-" "1.000"
	for mode in "yes shared pool" "no pool per graph"; do
		share=${mode%% *}
		set -- $(replay "$flavor" --share-pool "$share") || { status=1; continue; }
		printf '%-6s %-18s %14s %14s %12s\n' "$flavor" "${mode#* }" "$(mib "$1")" \
			"$(mib "$2")" "$(ratio "$1" "$eager")"
	done
done
exit $status
