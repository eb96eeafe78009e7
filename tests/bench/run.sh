#!/bin/sh
# run.sh BUILD_DIR - run every benchmark built in BUILD_DIR and print the
# figures. Exits non-zero only if a benchmark could not run, never because
# of what it measured.
set -u

build=${1:?usage: tests/bench/run.sh BUILD_DIR}
bin=$build/bin
status=0

type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null)
echo "build: $build (CMAKE_BUILD_TYPE=${type:-?}; figures are meant for Release)"
echo "machine: $(nproc) cores, $(uname -m), $(ldd --version 2>/dev/null | sed -n '1s/.* //p' | sed 's/^/glibc /')"
echo

for b in bench_alloc bench_flat bench_replay bench_frag bench_host bench_plugin; do
	if [ -x "$bin/$b" ]; then
		"$bin/$b" || status=1
	else
		echo "$b: not built"
	fi
	echo
done

if [ -x "$bin/npumem-replay" ] && [ -x "$bin/npumem-gentrace" ]; then
	sh "$(dirname "$0")/graph_pools.sh" "$build" || status=1
	echo
	sh "$(dirname "$0")/pinned_hold.sh" "$build" || status=1
	echo
	bash "$(dirname "$0")/replay_e2e.sh" "$build" || status=1
	echo
fi

if [ -x "$bin/npumemfs" ]; then
	bash "$(dirname "$0")/fs_bench.sh" "$bin/npumemfs" || status=1
	echo
fi

# Instructions of one cached-hit pair: callgrind totals of N and 2N pairs,
# differenced, so start-up and warm-up cancel out. 512 bytes is glibc's
# fastest path (tcache); 4096 is past it.
n=100000
instr() {
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin/bench_pair" "$@" 2>&1 >/dev/null |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
per_pair() {
	a=$(instr "$1" $n "$2")
	b=$(instr "$1" $((2 * n)) "$2")
	if [ -z "$a" ] || [ -z "$b" ]; then
		echo "?"
	else
		echo $(( (b - a) / n ))
	fi
}

echo "bench_pair: instructions per cached-hit malloc+free pair"
echo "(callgrind totals of $((2 * n)) pairs minus $n pairs, divided by $n; target < 150)"
echo
if ! [ -x "$bin/bench_pair" ]; then
	echo "bench_pair: not built"
	exit 1
fi
if ! command -v valgrind >/dev/null; then
	echo "n/a (valgrind not found)"
	exit $status
fi
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b ? a / b : 0 }'; }
printf '%-8s %10s %10s %8s  %-8s %10s %10s  %s\n' "size" "npa" "glibc" "ratio" "target" \
	"in pool" "pool/npa" "target <= 1.1"
for size in 512 4096; do
	npa=$(per_pair npa $size)
	pool=$(per_pair npa-pool $size)
	glibc=$(per_pair glibc $size)
	if [ "$npa" = "?" ] || [ "$pool" = "?" ] || [ "$glibc" = "?" ]; then
		echo "$size: callgrind gave no totals (npa: $npa, npa-pool: $pool, glibc: $glibc)"
		status=1
		continue
	fi
	verdict="not met"
	[ "$npa" -lt 150 ] && verdict="met"
	in_pool=$(ratio "$pool" "$npa")
	pool_verdict=$(awk -v r="$in_pool" 'BEGIN { print (r <= 1.1 ? "met" : "not met") }')
	printf '%-8s %10s %10s %8s  %-8s %10s %10s  %s\n' "$size" "$npa" "$glibc" \
		"$(ratio "$npa" "$glibc")" "$verdict" "$pool" "$in_pool" "$pool_verdict"
done
exit $status
