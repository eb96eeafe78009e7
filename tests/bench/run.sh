#!/bin/sh
# run.sh BUILD_DIR - run every benchmark built in BUILD_DIR and print the
# figures. Exits non-zero only if a benchmark could not run, never because
# of what it measured.
set -u

build=${1:?usage: tests/bench/run.sh BUILD_DIR}
bin=$build/bin
status=0
# The jemalloc baseline is dlopen'ed; its initial-exec TLS needs the
# loader's static TLS surplus (bench_baseline.h). Set once here, so no
# program re-executes itself to get it.
export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.rtld.optional_static_tls=16384"

type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null)
echo "build: $build (CMAKE_BUILD_TYPE=${type:-?}; figures are meant for Release)"
echo "machine: $(nproc) cores, $(uname -m), $(ldd --version 2>/dev/null | sed -n '1s/.* //p' | sed 's/^/glibc /')"
echo

for b in bench_alloc bench_flat bench_replay bench_frag bench_host bench_readers bench_plugin \
	bench_faults; do
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

if [ -x "$bin/npumem-whatif" ]; then
	bash "$(dirname "$0")/whatif.sh" "$build" || status=1
	echo
fi

if [ -x "$bin/npumemfs" ]; then
	bash "$(dirname "$0")/fs_bench.sh" "$bin/npumemfs" "$bin/fuse_static" || status=1
	echo
fi

# Instructions of one cached-hit pair, under callgrind.
if [ -x "$bin/bench_pair" ]; then
	sh "$(dirname "$0")/pair_instructions.sh" "$build" || status=1
else
	echo "bench_pair: not built"
fi
exit $status
