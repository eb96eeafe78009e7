#!/bin/sh
# pair_instructions.sh BUILD_DIR - instructions of one cached-hit
# malloc+free pair: the allocator in each flavor and in a pool's scope,
# glibc, jemalloc and mimalloc, and PyTorch's own CUDACachingAllocator
# where the upstream differential test has built it (BUILD_DIR/upstream,
# tests/upstream). Callgrind totals of N and 2N pairs are differenced, so
# start-up and warm-up cancel out; counts repeat exactly from run to run,
# unlike time, which is printed after them (4 KiB). 4096 bytes is past
# glibc's tcache, 512 its fastest path. Exits non-zero only if callgrind
# gave no totals.
set -u

build=${1:?usage: tests/bench/pair_instructions.sh BUILD_DIR}
bin=$build/bin
upstream=$build/upstream/build/upstream_pair
status=0
npu="?"
# The baselines are dlopen'ed (bench_baseline.h); jemalloc's initial-exec
# TLS needs the loader's static TLS surplus. A program re-executing itself
# to get it would leave callgrind behind, so it is set here.
case "${GLIBC_TUNABLES:-}" in
*optional_static_tls=*) ;;
*) export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.rtld.optional_static_tls=16384" ;;
esac
n=100000
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# instr MODE N SIZE: the callgrind total of bench_pair, or of upstream_pair
# for MODE torch; n/a where that is not there.
instr() {
	if [ "$1" = torch ]; then
		[ -x "$upstream" ] || { echo "n/a"; return; }
		set -- "$upstream" "$2" "$3"
	else
		set -- "$bin/bench_pair" "$@"
	fi
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" \
		2>&1 >"$out" | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
	grep -q 'n/a' "$out" && echo "n/a"
}
per_pair() {
	a=$(instr "$1" $n "$2")
	b=$(instr "$1" $((2 * n)) "$2")
	case "$a $b" in
	*n/a*) echo "n/a" ;;
	*[0-9]\ [0-9]*) echo $(( (b - a) / n )) ;;
	*) echo "?" ;;
	esac
}

echo "bench_pair: instructions per cached-hit malloc+free pair"
echo "(callgrind totals of $((2 * n)) pairs minus $n pairs, divided by $n;"
echo " target: npa <= 150; in a pool's scope <= 1.1x outside one;"
echo " torch: PyTorch's own CUDACachingAllocator on fakecuda, n/a until"
echo " ctest -R upstream_differential has built it)"
echo
if ! command -v valgrind >/dev/null; then
	echo "n/a (valgrind not found)"
	exit $status
fi
ratio() {
	case "$1 $2" in
	*n/a*) echo "n/a" ;;
	*) awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b ? a / b : 0 }' ;;
	esac
}
printf '%-6s %-10s %5s %6s %9s %9s %6s %6s %6s %6s %7s  %-8s\n' "size" "flavor" "npa" \
	"glibc" "jemalloc" "mimalloc" "torch" "/glibc" "/je" "/mi" "/torch" "target"
for size in 4096 512; do
	glibc=$(per_pair glibc $size)
	je=$(per_pair jemalloc $size)
	mi=$(per_pair mimalloc $size)
	torch=$(per_pair torch $size)
	for flavor in cuda npu npu-pool npu-filter; do
		npa=$(per_pair $flavor $size)
		if [ "$npa" = "?" ] || [ "$glibc" = "?" ]; then
			echo "$size $flavor: callgrind gave no totals (npa: $npa, glibc: $glibc)"
			status=1
			continue
		fi
		if [ "$flavor" = npu-pool ] || [ "$flavor" = npu-filter ]; then
			in_pool=$(ratio "$npa" "$npu")
			verdict=$(awk -v r="$in_pool" 'BEGIN { print (r <= 1.1 ? "met" : "not met") }')
			verdict="$verdict (${in_pool}x npu)"
		else
			verdict="not met"
			[ "$npa" -le 150 ] && verdict="met"
			[ "$flavor" = npu ] && npu=$npa
		fi
		printf '%-6s %-10s %5s %6s %9s %9s %6s %6s %6s %6s %7s  %s\n' "$size" "$flavor" \
			"$npa" "$glibc" "$je" "$mi" "$torch" "$(ratio "$npa" "$glibc")" \
			"$(ratio "$npa" "$je")" "$(ratio "$npa" "$mi")" "$(ratio "$npa" "$torch")" \
			"$verdict"
	done
done

# Time as well, outside callgrind: the same pairs, 5 M of them.
ns() {
	"$bin/bench_pair" "$1" 5000000 4096 2>/dev/null | sed -n 's/.*, \([0-9.]*\) ns\/pair$/\1/p'
}
echo
echo "ns per 4 KiB pair (5000000 pairs)"
glibc=$(ns glibc) je=$(ns jemalloc) mi=$(ns mimalloc)
printf '%-8s %8s %8s %9s %9s %7s\n' flavor npa glibc jemalloc mimalloc /glibc
for flavor in cuda npu-pool; do
	npa=$(ns $flavor)
	printf '%-8s %8s %8s %9s %9s %7s\n' "$flavor" "${npa:-?}" "${glibc:-?}" "${je:-?}" \
		"${mi:-?}" "$(ratio "${npa:-0}" "${glibc:-0}")"
done
exit $status
