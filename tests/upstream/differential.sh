#!/usr/bin/env bash
# The cuda flavor against PyTorch's own allocator: PyTorch 2.6.0's c10 (core
# and c10/cuda, unmodified, from Debian's source package) is built once on
# fakecuda, then random multi-stream traces are replayed by it and by
# `npumem-replay --flavor cuda`, and every memory_stats key must be equal.
#
#     differential.sh WORK_DIR NPUMEM_REPLAY NPUMEMFS_SRC [COUNT]
#
# WORK_DIR keeps the download and the build between runs. The source comes
# through a private apt configuration under WORK_DIR (deb-src lines for
# trixie made from the machine's own apt sources); the system's is never
# touched. Without the download the test skips (exit 77).
set -euo pipefail

work=${1:?WORK_DIR}
replay=${2:?NPUMEM_REPLAY}
src=$(cd "${3:?NPUMEMFS_SRC}" && pwd)
count=${4:-210}
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
	tar -xJf "$apt/dl/$orig" -C "$work/src" --wildcards '*/c10/*' '*/version.txt'
	rm -rf "$apt/dl" "$apt/lists" "$apt/cache"
}

[ -f "$pysrc/c10/cuda/CUDACachingAllocator.cpp" ] || fetch
cmake -S "$here/c10build" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
	-DPYTORCH_SRC="$pysrc" -DNPUMEMFS_SRC="$src" >"$work/configure.log" 2>&1 \
	|| { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" -j2 >"$work/build.log" 2>&1 \
	|| { tail -n 40 "$work/build.log"; exit 1; }
upstream=$work/build/upstream_replay
echo "upstream: PyTorch $(cat "$pysrc/version.txt") c10/cuda/CUDACachingAllocator.cpp on fakecuda"

traces=$work/traces
rm -rf "$traces"
python3 "$here/gen_traces.py" "$traces" "$count"
passed=0 failed=0
while read -r name capacity conf; do
	[ "$conf" = - ] && conf=
	t=$traces/$name
	if ! FAKECUDA_CAPACITY=$capacity PYTORCH_CUDA_ALLOC_CONF=$conf "$upstream" "$t" \
		>"$t.upstream" 2>"$t.err"; then
		echo "FAIL: $name: PyTorch's allocator stopped: $(tail -n 1 "$t.err")"
		failed=$((failed + 1))
		continue
	fi
	if ! "$replay" --flavor cuda --device-capacity "$capacity" ${conf:+--alloc-conf "$conf"} \
		--format stats "$t" >"$t.ours" 2>"$t.err"; then
		echo "FAIL: $name: npumem-replay stopped: $(tail -n 1 "$t.err")"
		failed=$((failed + 1))
		continue
	fi
	if diff -u "$t.upstream" "$t.ours" >"$t.diff"; then
		passed=$((passed + 1))
	else
		echo "FAIL: $name (capacity $capacity, alloc_conf '${conf}'): memory_stats differ"
		grep '^[-+][a-z]' "$t.diff" | head -n 12 | sed 's/^/  /'
		failed=$((failed + 1))
	fi
done <"$traces/cases"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
