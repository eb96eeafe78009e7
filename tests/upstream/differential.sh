#!/usr/bin/env bash
# The cuda flavor against PyTorch's own allocator: PyTorch 2.6.0's c10 (core
# and c10/cuda, unmodified, from Debian's source package) is built once on
# fakecuda, then random multi-stream traces are replayed by it and by
# `npumem-replay --flavor cuda`: every memory_stats key, every private
# pool's keys and every segment of the snapshot, with its pool and blocks,
# and for pins every host_memory_stats key but the timings, must be equal,
# and which block each pin got (blocks named in the order they were made),
# or both must refuse the same line. ATen's pinned host allocator is a
# header of the same source (aten/src/ATen/core/CachingHostAllocator.h).
# Each part (device allocator, private pools, pinned host allocator)
# prints "N passed, M failed" and its first difference in full.
#
#     differential.sh WORK_DIR NPUMEM_REPLAY NPUMEMFS_SRC [DEVICE POOLS HOST [NPU_DEVICE NPU_POOLS]]
#
# DEVICE, POOLS and HOST are how many traces of each part (210 each; ctest
# asks 400, 400 and 300).
#
# The npu flavor the same way against torch_npu's own allocator: v2.6.0's
# NPUCachingAllocator.cpp and NPUAllocatorConfig.cpp, unmodified, from the
# archive kept in tests/upstream/torch_npu (its sha256 checked), built on
# the same c10 with the stand-ins of npu_standins/ and run on the
# libnpusim that npumem-replay runs on; NPU_DEVICE and NPU_POOLS traces
# (none unless asked) replayed by upstream_npu_replay and by
# `npumem-replay --flavor npu`.
# WORK_DIR keeps the download and the build between runs. The source comes
# through a private apt configuration under WORK_DIR (deb-src lines for
# trixie made from the machine's own apt sources); the system's is never
# touched. Without the download the test skips (exit 77).
set -euo pipefail

work=${1:?WORK_DIR}
replay=${2:?NPUMEM_REPLAY}
src=$(cd "${3:?NPUMEMFS_SRC}" && pwd)
device_count=${4:-210}
pools_count=${5:-210}
host_count=${6:-210}
npu_device_count=${7:-0}
npu_pools_count=${8:-0}
here=$(cd "$(dirname "$0")" && pwd)
version=2.6.0+dfsg-7
orig=pytorch_2.6.0+dfsg.orig.tar.xz
orig_sha256=099a9601bc40d67656e75735c44abedb0fbe92d08817852ab7472eebb7e6ddff
pysrc=$work/src/pytorch-v2.6.0

skip() { echo "SKIP: $*"; exit 77; }

# deb-src lines for trixie on each Debian mirror the machine already uses.
mirrors() {
	{
		sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | tr ' ' '\n' || true
		awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/) { print $i; break } }' \
			/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true
	} | grep -E '/debian/?$' | sort -u || true
}

fetch() {
	local apt=$work/apt
	local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/parts"
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
		-o "Dir::State::status=$apt/status" -o Debug::NoLocking=1)
	command -v apt-get >/dev/null || skip "no apt-get to download PyTorch's source"
	mkdir -p "$apt/parts" "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/dl"
	: >"$apt/status"
	mirrors | sed 's|$| trixie main|; s|^|deb-src |' >"$apt/sources.list"
	[ -s "$apt/sources.list" ] || skip "no Debian mirror in the machine's apt sources"
	apt-get "${opts[@]}" -qq update >"$apt/log" 2>&1 \
		|| skip "cannot read trixie's source index ($(tail -n 1 "$apt/log"))"
	(cd "$apt/dl" && apt-get "${opts[@]}" -qq source --download-only "pytorch=$version") \
		>>"$apt/log" 2>&1 || skip "cannot download pytorch $version's source ($(tail -n 1 "$apt/log"))"
	echo "$orig_sha256  $apt/dl/$orig" | sha256sum -c --quiet - \
		|| { echo "FAIL: $orig does not have the expected sha256"; exit 1; }
	mkdir -p "$work/src"
	tar -xJf "$apt/dl/$orig" -C "$work/src" --wildcards '*/c10/*' '*/version.txt' \
		'*/aten/src/ATen/core/CachingHostAllocator.h'
	rm -rf "$apt/dl" "$apt/lists" "$apt/cache"
}

[ -f "$pysrc/c10/cuda/CUDACachingAllocator.cpp" ] &&
	[ -f "$pysrc/aten/src/ATen/core/CachingHostAllocator.h" ] || fetch
# torch_npu's sources, unpacked from the archive kept with this test, and
# the libnpusim npumem-replay is linked to.
npu_cmake=()
npu_unpack() {
	local archive=$here/torch_npu/torch_npu-v2.6.0-6e194f85-core-npu.tar.xz
	local sha256=279948a17c1c9da499f35bcef4382b163df42b3c3891c0e7028e2483901f101e
	local npusim
	echo "$sha256  $archive" | sha256sum -c --quiet - \
		|| { echo "FAIL: $archive does not have the expected sha256"; exit 1; }
	npusim=$(ldd "$replay" | awk '/libnpusim/ { print $3 }')
	[ -f "$npusim" ] || { echo "FAIL: $replay is not linked to libnpusim"; exit 1; }
	if [ ! -f "$work/torch_npu/.sha256" ] || [ "$(cat "$work/torch_npu/.sha256")" != "$sha256" ]; then
		rm -rf "$work/torch_npu"
		mkdir -p "$work/torch_npu"
		tar -xJf "$archive" -C "$work/torch_npu"
		echo "$sha256" >"$work/torch_npu/.sha256"
	fi
	npu_cmake=(-DTORCH_NPU_SRC="$work/torch_npu" -DNPUSIM_LIB="$npusim")
}
[ $((npu_device_count + npu_pools_count)) -eq 0 ] || npu_unpack

cmake -S "$here/c10build" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
	-DPYTORCH_SRC="$pysrc" -DNPUMEMFS_SRC="$src" "${npu_cmake[@]}" >"$work/configure.log" 2>&1 \
	|| { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" -j2 >"$work/build.log" 2>&1 \
	|| { tail -n 40 "$work/build.log"; exit 1; }
upstream=$work/build/upstream_replay
upstream_npu=$work/build/upstream_npu_replay
echo "upstream: PyTorch $(cat "$pysrc/version.txt") c10/cuda/CUDACachingAllocator.cpp on fakecuda"
[ ${#npu_cmake[@]} -eq 0 ] ||
	echo "upstream: torch_npu v2.6.0 (6e194f85) NPUCachingAllocator.cpp on libnpusim"

traces=$work/traces
rm -rf "$traces"
# The same traces each run; another seed (NPUMEMFS_DIFF_SEED) makes others.
seed=${NPUMEMFS_DIFF_SEED:-12}
python3 "$here/gen_traces.py" "$traces" "$device_count" "$pools_count" "$host_count" "$seed" \
	"$npu_device_count" "$npu_pools_count"
echo "traces: $device_count device, $pools_count with private pools, $host_count pinned (seed $seed)"
[ ${#npu_cmake[@]} -eq 0 ] ||
	echo "npu traces: $npu_device_count device, $npu_pools_count with private pools"

# Traces nNNNN and qNNNN are the npu flavor's.
is_npu() { case ${1##*/} in n[0-9]* | q[0-9]*) return 0 ;; esac; return 1; }

# Upstream's report: its stats, pool keys and segment lines, sorted; or
# the line at which it refused a call (status 1). The npu traces go to
# upstream_npu_replay, the others to upstream_replay.
run_upstream() {
	local rc=0 run=(env FAKECUDA_CAPACITY="$1" PYTORCH_CUDA_ALLOC_CONF="$2" "$upstream")
	is_npu "$3" && run=(env NPUSIM_CAPACITY="$1" PYTORCH_NPU_ALLOC_CONF="$2" "$upstream_npu")
	"${run[@]}" "$3" >"$3.raw" 2>"$3.err" || rc=$?
	LC_ALL=C sort "$3.raw"
	return "$rc"
}

# Ours, the same: --format stats then the snapshot's segments, and for a
# trace with pins --format pins; a replay stopped by a refusal prints
# "refused at line N", as upstream_replay. Host timings are durations,
# never equal twice; the requested bytes are the replay's own count. The
# npu flavor leaves out the keys torch_npu 2.6.0's memory_stats does not
# have (later torch_npu added them, and the npu flavor follows it).
run_ours() {
	local capacity=$1 conf=$2 t=$3 rc=0 pins= flavor=cuda
	local skip='^host_memory_stats\.host_(alloc|free)_time\.(avg|max|min|total) |^pinned_requested_bytes'
	if is_npu "$t"; then
		flavor=npu skip='^(num_device_alloc|num_device_free|num_sync_all_streams|num_oom_rejections) '
	elif grep -q '^pin ' "$t"; then
		pins=pins
	fi
	for format in stats snapshot $pins; do
		"$replay" --flavor $flavor --device-capacity "$capacity" ${conf:+--alloc-conf "$conf"} \
			--format $format "$t" >"$t.$format" 2>"$t.ours_err" || rc=$?
		if [ "$rc" -eq 1 ] && grep -q "^$t:[0-9]*: " "$t.ours_err"; then
			sed -n "s|^$t:\([0-9]*\): .*|refused at line \1|p" "$t.ours_err" | head -n 1
			return 0
		fi
		[ "$rc" -eq 0 ] || return "$rc"
	done
	{ grep -Ev "$skip" "$t.stats" || true; python3 "$here/segment_lines.py" <"$t.snapshot"
	  [ -z "$pins" ] || cat "$t.pins"; } | LC_ALL=C sort
}

# Both reports of the trace's first N lines, in $t.up_n and $t.ours_n.
prefix_differs() {
	local n=$1 capacity=$2 conf=$3 t=$4
	head -n "$n" "$t" >"$t.head"
	run_upstream "$capacity" "$conf" "$t.head" >"$t.up_n" || true
	run_ours "$capacity" "$conf" "$t.head" >"$t.ours_n" 2>/dev/null || true
	! cmp -s "$t.up_n" "$t.ours_n"
}

# The first difference in full: the trace, the line after which the
# reports first differ (bisected over the trace's prefixes), the first
# key that differs there and both values.
first_difference() {
	local name=$1 capacity=$2 conf=$3 t=$traces/$1 lo=0 hi mid
	hi=$(wc -l <"$t")
	while [ $((hi - lo)) -gt 1 ]; do
		mid=$(((lo + hi) / 2))
		if prefix_differs "$mid" "$capacity" "$conf" "$t"; then hi=$mid; else lo=$mid; fi
	done
	prefix_differs "$hi" "$capacity" "$conf" "$t" || true
	echo "FAIL: $name (capacity $capacity, alloc_conf '${conf}'): the reports differ"
	echo "  trace: $t, from line $hi: $(sed -n "${hi}p" "$t")"
	diff "$t.up_n" "$t.ours_n" | awk '
		/^</ { u[++nu] = substr($0, 3) } /^>/ { o[++no] = substr($0, 3) }
		END { k = u[1]; sub(/ .*/, "", k); j = o[1]; sub(/ .*/, "", j)
		      if (k == j && nu) print "  key:      " k
		      print "  upstream: " (nu ? u[1] : "(nothing)")
		      print "  ours:     " (no ? o[1] : "(nothing)") }' || true
	if grep -q "^refused" "$t.up_n"; then
		echo "  upstream: $(tail -n 1 "$t.head.err")"
	fi
	if grep -q "^refused" "$t.ours_n"; then
		echo "  ours: $(tail -n 1 "$t.head.ours_err")"
	fi
}

# One trace on both sides: $t.result says pass, differ or which side
# stopped other than by a refusal, and why.
check_case() {
	local name=$1 capacity=$2 conf=$3 t=$traces/$1 rc=0
	[ "$conf" = - ] && conf=
	run_upstream "$capacity" "$conf" "$t" >"$t.upstream" || rc=$?
	if [ "$rc" -gt 1 ]; then
		echo "upstream_replay stopped (status $rc): $(tail -n 1 "$t.err")" >"$t.result"
	elif ! run_ours "$capacity" "$conf" "$t" >"$t.ours"; then
		echo "npumem-replay stopped: $(tail -n 1 "$t.ours_err")" >"$t.result"
	elif cmp -s "$t.upstream" "$t.ours"; then
		echo pass >"$t.result"
	else
		echo differ >"$t.result"
	fi
}

# As many traces at once as there are processors.
export upstream replay here traces
export -f run_upstream run_ours check_case
export upstream_npu
export -f is_npu
xargs -P "$(nproc)" -L 1 bash -c 'check_case "$@"' _ <"$traces/cases"

declare -A passed failed
while read -r name capacity conf; do
	[ "$conf" = - ] && conf=
	part=${name:0:1} result=$(cat "$traces/$name.result")
	: "${passed[$part]:=0}" "${failed[$part]:=0}"
	if [ "$result" = pass ]; then
		passed[$part]=$((passed[$part] + 1))
		continue
	fi
	if [ "${failed[$part]}" -eq 0 ]; then
		if [ "$result" = differ ]; then
			first_difference "$name" "$capacity" "$conf"
		else
			echo "FAIL: $name: $result"
		fi
	fi
	failed[$part]=$((failed[$part] + 1))
done <"$traces/cases"

status=0
for part in d p h n q; do
	[ -n "${passed[$part]:-}" ] || continue
	case $part in
	d) what="device allocator" ;;
	p) what="private pools" ;;
	h) what="pinned host allocator" ;;
	n) what="npu device allocator" ;;
	q) what="npu private pools" ;;
	esac
	echo "$what: ${passed[$part]} passed, ${failed[$part]} failed"
	[ "${failed[$part]}" -eq 0 ] || status=1
done
exit $status
