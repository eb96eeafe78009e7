#!/usr/bin/env bash
# replay_e2e.sh BUILD_DIR - npumem-replay from start to exit against its
# own replay loop and against trace_baseline (fgets + sscanf + malloc/free)
# under glibc, jemalloc and mimalloc, on the same trace files; and its
# memory on a 10,000,000-event trace read from a pipe. The median of RUNS
# (default 3) is kept. Prints figures only: it never fails on time.
set -u
build=${1:?usage: tests/bench/replay_e2e.sh BUILD_DIR}
bin=$build/bin
runs=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for prog in npumem-replay npumem-gentrace trace_baseline; do
	[ -x "$bin/$prog" ] || { echo "replay_e2e: $bin/$prog not built"; exit 1; }
done
lib() { ls /usr/lib/*-linux-gnu/"$1" 2>/dev/null | head -1; }
jemalloc=$(lib libjemalloc.so.2)
mimalloc=$(lib libmimalloc.so.2)

# "SECONDS MAXRSS_KB" of one run of the command, from the child's rusage.
measure() {
	python3 -c '
import resource, subprocess, sys, time
t = time.perf_counter()
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.4f %d" % (wall, ru.ru_maxrss) if rc == 0 else "fail 0")' "$@"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "n/a" }'; }
# Median whole-process seconds of RUNS runs of the command.
whole() { for _ in $(seq "$runs"); do measure "$@" | cut -d' ' -f1; done | median; }
# Median of npumem-replay's own replay-loop seconds ("N events in S s").
loop() {
	for _ in $(seq "$runs"); do
		"$bin/npumem-replay" "$1" 2>&1 >/dev/null | sed -n 's/.* events in \([0-9.]*\) s .*/\1/p'
	done | median
}
# Median seconds of trace_baseline on $2 with malloc from library $1
# ("glibc": the C library's own; empty: not installed, n/a).
baseline() {
	if [ -z "$1" ]; then echo "n/a"; return; fi
	local preload=$1
	[ "$preload" = glibc ] && preload=
	for _ in $(seq "$runs"); do
		LD_PRELOAD=$preload measure "$bin/trace_baseline" "$2" | cut -d' ' -f1
	done | median
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "n/a" }'; }
verdict() { awk -v r="$1" -v op="$2" -v t="$3" 'BEGIN {
	if (r == "n/a") { print "n/a"; exit }
	ok = op == "<=" ? r + 0 <= t : r + 0 >= t; print ok ? "met" : "not met" }'; }

"$bin/npumem-gentrace" churn --seed 42 --steps 500000 --out "$work/churn.trace"
"$bin/npumem-gentrace" training --seed 42 --steps 1000 --out "$work/training.trace"

echo "replay_e2e: npumem-replay whole process vs its replay loop and vs trace_baseline"
echo "(seconds, median of $runs; churn: 500k events 512 B..1 MiB, training: $(grep -c . "$work/training.trace") lines)"
echo
printf '%-9s %8s %8s %8s  %-8s %9s %9s %9s %9s  %s\n' trace whole loop whole/lp "<=1.43" \
	glibc jemalloc mimalloc je/whole ">=3"
for t in churn training; do
	f=$work/$t.trace
	w=$(whole "$bin/npumem-replay" "$f")
	l=$(loop "$f")
	g=$(baseline glibc "$f")
	j=$(baseline "$jemalloc" "$f")
	m=$(baseline "$mimalloc" "$f")
	r=$(ratio "$w" "$l")
	x=$(ratio "$j" "$w")
	printf '%-9s %8s %8s %8s  %-8s %9s %9s %9s %9s  %s\n' "$t" "$w" "$l" "$r" \
		"$(verdict "$r" "<=" 1.43)" "$g" "$j" "$m" "$x" "$(verdict "$x" ">=" 3)"
done

echo
rss=$(awk 'BEGIN { for (i = 0; i < 5000000; i++) { print "alloc t" i " 4096"; print "free t" i } }' |
	python3 -c '
import resource, subprocess, sys
subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$bin/npumem-replay" -)
echo "npumem-replay, 10,000,000 events through a pipe: max RSS $((rss / 1024)) MiB (target <= 64: $(
	[ "$rss" -le $((64 * 1024)) ] && echo met || echo not met))"
