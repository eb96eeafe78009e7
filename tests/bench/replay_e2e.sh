#!/bin/bash
# replay_e2e.sh BUILD_DIR - npumem-replay end to end, as a user runs it:
# whole-process time against its own replay-loop time, and against a plain
# C replay of the same file (trace_baseline: sscanf, malloc/free) under
# glibc, jemalloc and mimalloc, in the same run. Two traces, made by the
# project's tools: churn, 500,000 events of 512 B to 4 MiB with about 2,000
# live blocks on one stream, and contrib/traces/training.trace repeated to
# 1 M events. Then the peak RSS of a 10 M-event trace read through a pipe.
# RUNS runs of npumem-replay and of the jemalloc baseline (default 5), the
# median kept; the glibc and mimalloc baselines, shown for reference and
# many times slower (large sizes go to mmap and back), run once. Against
# jemalloc, processor time (user + system) is compared too: what a run
# costs when its two threads cannot overlap. Prints figures; fails only if
# something could not run.
set -u

build=${1:?usage: tests/bench/replay_e2e.sh BUILD_DIR}
bin=$build/bin
here=$(cd "$(dirname "$0")" && pwd)
runs=${RUNS:-5}
lib() { ls /usr/lib/*-linux-gnu/"$1" 2>/dev/null | head -1; }
jemalloc=$(lib libjemalloc.so.2)
mimalloc=$(lib libmimalloc.so.2)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

for b in npumem-replay npumem-gentrace trace_baseline; do
	[ -x "$bin/$b" ] || { echo "replay_e2e: $bin/$b not built"; exit 1; }
done

"$bin/npumem-gentrace" churn --seed 42 --steps 500000 --live 2000 --max-size 4MiB \
	--out "$tmp/churn.trace" || exit 1
sh "$here/repeat_loop.sh" "$here/../../contrib/traces/training.trace" 1000000 \
	>"$tmp/training.trace" || exit 1

median() { sort -g | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
verdict() { awk -v r="$1" -v op="$2" -v t="$3" \
	'BEGIN { ok = op == "<=" ? r <= t : r >= t; print ok ? "met" : "not met" }'; }

# wall CMD...: the whole process's wall time in seconds, its stderr in
# $tmp/err; its processor time (user + system, every thread) is added to
# $tmp/cpu.
wall() {
	local TIMEFORMAT='%3R %3U %3S' t
	t=$({ time "$@" >/dev/null 2>"$tmp/err"; } 2>&1) || return 1
	set -- $t
	awk -v u="$2" -v s="$3" 'BEGIN { printf "%.3f\n", u + s }' >>"$tmp/cpu"
	echo "$1"
}

# replay_times TRACE: "WHOLE LOOP CPU", the medians of $runs runs.
replay_times() {
	: >"$tmp/whole"; : >"$tmp/loop"; : >"$tmp/cpu"
	for _ in $(seq "$runs"); do
		wall "$bin/npumem-replay" --format stats "$1" >>"$tmp/whole" || return 1
		sed -n 's/^npumem-replay: [0-9]* events in \([0-9.]*\) s.*/\1/p' "$tmp/err" >>"$tmp/loop"
	done
	echo "$(median <"$tmp/whole") $(median <"$tmp/loop") $(median <"$tmp/cpu")"
}

# baseline_time PRELOAD TRACE RUNS: "WHOLE CPU", the medians, or n/a.
baseline_time() {
	[ -z "$1" ] || [ -r "$1" ] || { echo n/a; return; }
	: >"$tmp/base"; : >"$tmp/cpu"
	for _ in $(seq "$3"); do
		LD_PRELOAD=$1 wall "$bin/trace_baseline" "$2" >>"$tmp/base" || { echo n/a; return; }
	done
	echo "$(median <"$tmp/base") $(median <"$tmp/cpu")"
}

row() { printf '%-36s %10s %10s %8s  %-13s %s\n' "$@"; }

echo "replay_e2e: npumem-replay --format stats, whole process vs its replay loop and vs"
echo "trace_baseline (sscanf + malloc/free) on the same file; median of $runs runs, seconds"
row figure value baseline ratio target verdict
for name in churn training; do
	trace=$tmp/$name.trace
	set -- $(replay_times "$trace") || { echo "$name: npumem-replay failed"; cat "$tmp/err"; exit 1; }
	whole=$1 loop=$2 cpu=$3
	r=$(ratio "$whole" "$loop")
	row "$name: whole / replay loop" "$whole" "$loop" "$r" "<= 1.43" "$(verdict "$r" "<=" 1.43)"
	for lib in glibc jemalloc mimalloc; do
		case $lib in glibc) pre="" ;; jemalloc) pre=${jemalloc:-/none} ;; mimalloc) pre=${mimalloc:-/none} ;; esac
		n=1
		[ $lib = jemalloc ] && n=$runs
		set -- $(baseline_time "$pre" "$trace" $n)
		base=$1 base_cpu=${2:-}
		if [ "$base" = n/a ]; then
			row "$name: baseline $lib / whole" "$whole" n/a n/a "" "n/a ($lib not found)"
			continue
		fi
		r=$(ratio "$base" "$whole")
		if [ $lib = jemalloc ]; then
			row "$name: baseline $lib / whole" "$whole" "$base" "$r" ">= 9" "$(verdict "$r" ">=" 9)"
			row "$name: $lib cpu / cpu" "$cpu" "$base_cpu" \
			    "$(ratio "$base_cpu" "$cpu")" "-" ""
		else
			row "$name: baseline $lib / whole" "$whole" "$base" "$r" "-" ""
		fi
	done
done

# Memory against length: the same churn through a pipe, 10 M events vs 500 k;
# peak RSS in KB, from GNU time (a child forked from a large parent, such
# as python, starts with the parent's resident pages in its peak).
rss() {
	"$bin/npumem-gentrace" churn --seed 42 --steps "$1" --live 2000 --max-size 4MiB |
		/usr/bin/time -f %M -o "$tmp/rss" "$bin/npumem-replay" --format stats - \
			>/dev/null 2>&1
	cat "$tmp/rss"
}
small=$(rss 500000) big=$(rss 10000000)
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
row "churn 10M (pipe) RSS MB / 500k" "$(mb "$big")" "$(mb "$small")" "$(ratio "$big" "$small")" \
	"<= 64 MB" "$(awk -v k="$big" 'BEGIN { print k <= 65536 ? "met" : "not met" }')"
