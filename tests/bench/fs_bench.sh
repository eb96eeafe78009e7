#!/usr/bin/env bash
# fs_bench.sh NPUMEMFS - what the file system costs, side by side.
#
#  1. open+read+close of stats/device0 (rendered from a stats copy at each
#     open) against the same for README (constant text), on one mount.
#     Target: ratio <= 1.5.
#  2. replay throughput (events/s) with 4 processes reading stats in a loop
#     against none. Target: ratio >= 0.9. On a machine with few cores the
#     readers mostly take processor time away from the replay; events per
#     CPU second of the replay thread shows what they cost it otherwise
#     (lock and cache contention), and is printed beside it.
#
# Prints figures; never fails on time. Run: cmake --build B --target bench-fs
# (tests/bench/run.sh runs it too).
set -u
NPUMEMFS=${1:?usage: fs_bench.sh NPUMEMFS}
[ -c /dev/fuse ] || { echo "SKIP: /dev/fuse is missing"; exit 0; }

WORK=$(mktemp -d /tmp/npumemfs-bench.XXXXXX)
MNT=$WORK/mnt
mkdir "$MNT"
PID=
cleanup() {
	fusermount3 -u -z "$MNT" 2>/dev/null
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
printf '[device]\ncapacity = 16GiB\n' >"$WORK/bench.ini"
"$NPUMEMFS" --config "$WORK/bench.ini" -f "$MNT" 2>"$WORK/daemon.err" &
PID=$!
for _ in $(seq 200); do
	awk -v m="$MNT" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo && break
	sleep 0.05
done

echo "== open+read+close, 20000 times each (microseconds per file)"
python3 - "$MNT" <<'PY'
import os, sys, time
mnt = sys.argv[1]
def per_open(path, n=20000):
    best = None
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(n):
            fd = os.open(path, os.O_RDONLY)
            while os.read(fd, 65536):
                pass
            os.close(fd)
        dt = (time.perf_counter() - t) / n * 1e6
        best = dt if best is None else min(best, dt)
    return best
readme = per_open(f"{mnt}/README")
stats = per_open(f"{mnt}/stats/device0")
print(f"README          {readme:8.1f} us")
print(f"stats/device0   {stats:8.1f} us")
print(f"ratio           {stats / readme:8.2f}   (target <= 1.5)")
PY

echo "== replay throughput, events per second"
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
replay() {
	echo "$WORK/bench.trace" >"$MNT/workload/replay"
	while grep -q '^state: running$' "$MNT/workload/replay"; do sleep 0.05; done
	sed -n 's/^events_per_\(cpu_\)\{0,1\}second: //p' "$MNT/workload/replay" | paste -sd' '
}
reader() {
	while [ ! -e "$WORK/stop" ]; do cat "$MNT/stats/device0" >/dev/null; done
}
replay >/dev/null # warm the cache: both measured runs start alike
alone=$(replay)
for _ in 1 2 3 4; do reader & done
busy=$(replay)
touch "$WORK/stop"
wait $(jobs -p | grep -v "^$PID$") 2>/dev/null
echo "$alone $busy" | awk '{
	printf "                  events/s  events/CPU-s\n"
	printf "no readers      %10d    %10d\n4 stats readers %10d    %10d\n", $1, $2, $3, $4
	printf "ratio           %10.2f    %10.2f   (target >= 0.9)\n", $3 / $1, $4 / $2
}'
