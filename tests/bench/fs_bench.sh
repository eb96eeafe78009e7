#!/usr/bin/env bash
# fs_bench.sh NPUMEMFS FUSE_STATIC - what the file system costs, side by side.
#
#  1. A read of stats/device0 (open, fstat, read to the end, close: what
#     cat does) against the same read of a file of the same size served by
#     fuse_static, the least a libfuse daemon does (tests/bench/README.md).
#     Target: ratio <= 1.0.
#  2. A replay with 4 `cat stats/device0` loops against the same replay
#     alone, in events per CPU second. Target: ratio >= 0.95. Beside it
#     the same replay with 4 shell loops that start no process, 4 loops
#     reading a copy of stats/device0 on the local disk, which never
#     reach the daemon, and 4 reading the in-mount README, which never
#     reach the allocator: what busy readers cost a thread on this
#     machine, and what the daemon adds to that.
#
# With two CPUs or more it may use, the replay thread has the last to itself and
# everything else (the daemons' other threads, the readers, this script)
# runs on the others: two CPUs of a virtual machine can differ in speed by
# twice, and rounds that land on different CPUs would compare only that.
#
# Prints figures; never fails on time. Run: cmake --build B --target bench-fs
# (tests/bench/run.sh runs it too).
set -u
NPUMEMFS=${1:?usage: fs_bench.sh NPUMEMFS FUSE_STATIC}
FUSE_STATIC=${2:?usage: fs_bench.sh NPUMEMFS FUSE_STATIC}
[ -c /dev/fuse ] || { echo "SKIP: /dev/fuse is missing"; exit 0; }

# The CPUs this script may use (taskset, cpusets), not 0..nproc-1: the
# last for the replay thread, the rest (a list, empty with one CPU) for
# everything else, this script first, so that all it starts inherits them.
read -r REPLAY_CPU REST_CPUS < <(python3 -c 'import os
c = sorted(os.sched_getaffinity(0))
print(c[-1], ",".join(map(str, c[:-1])))')
if [ -z "$REST_CPUS" ] || ! taskset -pc "$REST_CPUS" $$ >/dev/null 2>&1; then
	REPLAY_CPU="" REST_CPUS=""
fi

WORK=$(mktemp -d /tmp/npumemfs-bench.XXXXXX)
PIDS=()
cleanup() {
	for m in "$WORK"/mnt*; do fusermount3 -u -z "$m" 2>/dev/null; done
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT

mounted() {
	for _ in $(seq 200); do
		awk -v m="$1" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo && return 0
		sleep 0.05
	done
	echo "fs_bench: $1 was not mounted" >&2
	exit 1
}

# mount NAME COMMAND...: runs a daemon in the foreground on $WORK/NAME.
mount_with() {
	local mnt=$WORK/$1
	shift
	mkdir "$mnt"
	"$@" "$mnt" -f 2>>"$WORK/daemon.err" &
	PIDS+=($!)
	mounted "$mnt"
}

printf '[device]\ncapacity = 16GiB\n' >"$WORK/bench.ini"
mount_with mnt "$NPUMEMFS" --config "$WORK/bench.ini"
NPID=${PIDS[0]}
SIZE=$(wc -c <"$WORK/mnt/stats/device0")
mount_with mnt-static "$FUSE_STATIC" "$SIZE"
mount_with mnt-fresh "$FUSE_STATIC" --fresh "$SIZE"

echo "== 1. a read of a $SIZE-byte file as cat reads it: open, fstat, read to the end, close"
echo "   (7 rounds of 2000 reads, each file in turn; medians; cpu = the reader's + its daemon's)"
[ -n "$REST_CPUS" ] && echo "   (the reader and the daemons on CPUs $REST_CPUS)"
python3 - "$WORK" "$NPID" "${PIDS[1]}" "${PIDS[2]}" <<'PY'
import os, sys, time, resource
work, npid, spid, fpid = sys.argv[1:5]
tick = os.sysconf("SC_CLK_TCK")

def daemon_cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick

def own_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

def reads(path, pid, n=2000):
    t, c, d = time.perf_counter(), own_cpu(), daemon_cpu(pid)
    for _ in range(n):
        fd = os.open(path, os.O_RDONLY)
        os.fstat(fd)
        while os.read(fd, 65536):
            pass
        os.close(fd)
    wall = (time.perf_counter() - t) / n * 1e6
    cpu = (own_cpu() - c + daemon_cpu(pid) - d) / n * 1e6
    return wall, cpu

rows = [
    ("fuse_static", f"{work}/mnt-static/file", spid),
    ("fuse_static --fresh", f"{work}/mnt-fresh/file", fpid),
    ("README", f"{work}/mnt/README", npid),
    ("stats/device0", f"{work}/mnt/stats/device0", npid),
]
got = {name: [] for name, _, _ in rows}
for _ in range(7):
    for name, path, pid in rows:
        got[name].append(reads(path, pid))

def median(xs):
    return sorted(xs)[len(xs) // 2]

wall = {k: median([w for w, _ in v]) for k, v in got.items()}
cpu = {k: median([c for _, c in v]) for k, v in got.items()}
print(f"{'':22s}{'us/read':>10s}{'cpu us':>10s}")
for name, _, _ in rows:
    print(f"{name:22s}{wall[name]:10.1f}{cpu[name]:10.1f}")
base = "fuse_static"
print(f"{'stats / fuse_static':22s}{wall['stats/device0'] / wall[base]:10.2f}"
      f"{cpu['stats/device0'] / cpu[base]:10.2f}   (target <= 1.0)")
print(f"{'stats / --fresh':22s}{wall['stats/device0'] / wall['fuse_static --fresh']:10.2f}"
      f"{cpu['stats/device0'] / cpu['fuse_static --fresh']:10.2f}")
print(f"{'stats / README':22s}{wall['stats/device0'] / wall['README']:10.2f}"
      f"{cpu['stats/device0'] / cpu['README']:10.2f}")
PY

echo
echo "== 2. replay events per CPU second: alone, with 4 loops without cat, 4 cat loops of a local copy, of README, of stats/device0"
[ -n "$REPLAY_CPU" ] && echo "   (the replay thread on CPU $REPLAY_CPU, everything else on CPUs $REST_CPUS)"
python3 - "$WORK/bench.trace" <<'PY'
import random, sys
random.seed(7)
live, n, lines = [], 0, []
for i in range(2000000):
    if live and (len(live) > 300 or random.random() < 0.5):
        lines.append(f"free {live.pop(random.randrange(len(live)))}")
    else:
        size = random.choice([512, 4096, 65536, 1 << 20, 3 << 20, 12 << 20])
        lines.append(f"alloc t{n} {size}")
        live.append(f"t{n}")
        n += 1
lines += [f"free {t}" for t in live]
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
MNT=$WORK/mnt
# TICKS = the daemon's utime + stime in clock ticks, read without a fork:
# the replay starts as the write that asks for it returns, and a $(awk)
# there took long enough to leave its first tens of milliseconds out.
CLK_TCK=$(getconf CLK_TCK)
daemon_ticks() {
	local stat
	read -r stat <"/proc/$NPID/stat"
	set -- ${stat##*) }
	TICKS=$((${12} + ${13}))
}
# The replay thread, once started, to its own CPU.
pin_replay() {
	local t comm
	[ -n "$REPLAY_CPU" ] || return 0
	for t in /proc/"$NPID"/task/*; do
		read -r comm <"$t/comm" 2>/dev/null || continue
		[ "$comm" = npumemfs-replay ] && taskset -pc "$REPLAY_CPU" "${t##*/}" >/dev/null
	done
}
# replay [FILE]: one replay of the trace, with 4 readers of FILE from the
# moment its thread is on its CPU (readers started first would leave this
# script too little of the other CPUs to pin it before most of the replay
# ran): "events replay_cpu daemon_cpu". The daemon's CPU is counted once
# the write that starts it has returned: the write reads the trace, which
# is not the replay.
replay() {
	local before after
	echo "$WORK/bench.trace" >"$MNT/workload/replay"
	daemon_ticks
	before=$TICKS
	pin_replay
	[ -z "${1:-}" ] || readers_on "$1"
	while grep -q '^state: running$' "$MNT/workload/replay"; do sleep 0.05; done
	daemon_ticks
	after=$TICKS
	[ -z "${1:-}" ] || readers_off
	awk -v b="$before" -v a="$after" -v t="$CLK_TCK" '
		/^events: / { split($2, e, "/"); n = e[1] }
		/^cpu_seconds: / { c = $2 }
		END { print n, c, (a - b) / t }' "$MNT/workload/replay"
}
# reader FILE: cat FILE in a loop until $WORK/stop appears. FILE "-":
# the same loop without cat, a stat a turn and no process started.
reader() {
	if [ "$1" = - ]; then
		while [ ! -e "$WORK/stop" ]; do :; done
	else
		while [ ! -e "$WORK/stop" ]; do cat "$1" >/dev/null; done
	fi
}
readers_on() {
	rm -f "$WORK/stop"
	READERS=()
	for _ in 1 2 3 4; do
		reader "$1" &
		READERS+=($!)
	done
}
readers_off() {
	touch "$WORK/stop"
	wait "${READERS[@]}" 2>/dev/null
}
replay >/dev/null # warm the cache: every measured run starts alike
cp "$MNT/stats/device0" "$WORK/stats.copy"
for k in alone nocat local readme busy; do : >"$WORK/$k"; done
for _ in 1 2 3; do
	replay >>"$WORK/alone"
	replay - >>"$WORK/nocat"
	replay "$WORK/stats.copy" >>"$WORK/local"
	replay "$MNT/README" >>"$WORK/readme"
	replay "$MNT/stats/device0" >>"$WORK/busy"
done
# Medians of the three runs; the replay thread's CPU is what the replay
# itself spent, the daemon's also what serving the readers cost it. The
# readers of the local copy never reach the daemon, those of README never
# reach the allocator: what they cost the replay is what four busy
# processes cost any thread on this machine (caches, TLB, the other
# core's share of the memory bus, the hypervisor), the baseline for the
# stats readers' row.
median_rate() { # FILE FIELD: median of events / that CPU column
	awk -v f="$2" '{ print $1 / $f }' "$1" | sort -g | sed -n 2p
}
for k in alone nocat local readme busy; do
	echo "$k $(median_rate "$WORK/$k" 2) $(median_rate "$WORK/$k" 3)"
done | awk '{ t[$1] = $2; d[$1] = $3 }
function row(name, k) { printf "%-30s%16d%16d\n", name, t[k], d[k] }
function ratio(name, k, base, note) {
	printf "%-30s%16.2f%16.2f%s\n", name, t[k] / t[base], d[k] / d[base], note
}
END {
	printf "%-30s%16s%16s\n", "events per CPU second", "replay thread", "whole daemon"
	row("alone", "alone")
	row("4 loops without cat", "nocat")
	row("4 local-copy readers", "local")
	row("4 README readers", "readme")
	row("4 stats readers", "busy")
	ratio("stats readers / alone", "busy", "alone", "   (target >= 0.95)")
	ratio("loops without cat / alone", "nocat", "alone", "   (busy, no process started)")
	ratio("local-copy readers / alone", "local", "alone", "   (the machine: no daemon)")
	ratio("README readers / alone", "readme", "alone", "   (no allocator)")
	ratio("stats readers / local-copy", "busy", "local", "")
	ratio("stats readers / README readers", "busy", "readme", "")
}'
