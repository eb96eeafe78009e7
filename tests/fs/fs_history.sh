#!/usr/bin/env bash
# Memory history: ctl/record_memory_history turns it on, trace/deviceN
# shows the ring as JSON lines and ends (tracefs trace),
# trace_pipe/deviceN streams it and waits for more (tracefs trace_pipe),
# and snapshot/deviceN.pickle is the _dump_snapshot file memory_viz reads.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
mount_fs

CTL=$MNT/ctl/record_memory_history
TRACE=$MNT/trace_pipe/device0

expect_eq "$(stat -c %a "$CTL")" 600 "ctl mode"
expect_eq "$(stat -c %a "$TRACE")" 444 "trace mode"
expect_eq "$(stat -c %a "$MNT/snapshot/device0.pickle")" 444 "pickle mode"
expect_eq "$(head -n 1 "$CTL")" "device0: off" "off by default"

# Recording off: nothing can come, so a read fails at once, blocking or
# not, and the log says why, once per reader.
nonblocking_read() {
	python3 - "$TRACE" <<'PY'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
try:
    data = os.read(fd, 65536)
    print("read", len(data))
except OSError as e:
    print(errno.errorcode[e.errno])
PY
}
expect_eq "$(nonblocking_read)" "ENODATA" "non-blocking read with recording off"
expect_fail "timeout 5 head -n 3 $TRACE" "No data available"
grep -q '^\[ *[0-9.]*\] trace_pipe/device0: memory history is off, so no entry can come: echo all > ctl/record_memory_history, then read again$' \
	"$MNT/log" || fail "no log line for a reader with recording off"

expect_fail "echo sometimes > $CTL" "Invalid argument"
grep -q "^last_error: 'sometimes' is not 'all \[max_entries\]', 'state' or 'off'$" "$CTL" \
	|| fail "no last_error for a bad value"
expect_fail "echo 'all 0' > $CTL" "Invalid argument"

echo "all 1000" >"$CTL"
expect_eq "$(head -n 1 "$CTL")" "device0: all max_entries 1000 recorded 0 kept 0" "recording on"

# 1 MiB (npu: + 32 bytes, 1049088) is a large-pool request: a 20 MiB segment.
truncate -s 1M "$MNT/tensors/device0/a"
rm "$MNT/tensors/device0/a"

# The reader gets the four entries, then waits until timeout ends it.
STATUS=0
timeout 2 cat "$TRACE" >"$WORK/trace.out" || STATUS=$?
expect_eq "$STATUS" 124 "cat of trace_pipe/device0 waits for more"
python3 - "$WORK/trace.out" <<'PY' || fail "trace lines"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
got = [(e["action"], e["size"], e["stream"]) for e in lines]
want = [("segment_alloc", 20971520, 0), ("alloc", 1048576, 0),
        ("free_requested", 1048576, 0), ("free_completed", 1048576, 0)]
assert got == want, got
assert lines[1]["addr"] == lines[0]["addr"] == lines[3]["addr"]
assert list(lines[0]) == ["action", "addr", "size", "stream", "pool_id", "time_us", "frames"], list(lines[0])
assert all(l["time_us"] > 1.6e15 for l in lines)
PY
# trace/device0 holds the same lines and ends; reading it consumes nothing.
timeout 5 cat "$MNT/trace/device0" >"$WORK/ring.out" || fail "cat of trace/device0 did not end"
cmp -s "$WORK/ring.out" "$WORK/trace.out" || fail "trace/device0 differs from what the pipe gave"
timeout 5 cat "$MNT/trace/device0" | cmp -s - "$WORK/ring.out" || fail "trace/device0 was consumed"

# A waiting reader wakes for new entries: 4 KiB needs a small-pool segment,
# so lines 5 and 6 are its segment_alloc and alloc. head gives back what it
# read beyond them with lseek, without a complaint.
timeout 5 head -n 6 "$TRACE" >"$WORK/head.out" 2>"$WORK/head.err" &
HEAD=$!
sleep 0.5
truncate -s 4096 "$MNT/tensors/device0/b"
STATUS=0
wait "$HEAD" || STATUS=$?
expect_eq "$STATUS" 0 "head -n 6 got its sixth line"
[ -s "$WORK/head.err" ] && fail "head -n 6 complained: $(cat "$WORK/head.err")"
expect_eq "$(sed -n '5,6s/.*"action":"\([a-z_]*\)","addr":[0-9]*,"size":\([0-9]*\).*/\1 \2/p' "$WORK/head.out" | tr '\n' ' ')" \
	"segment_alloc 2097152 alloc 4096 " "lines 5 and 6"

# The pickle: a's cached 20 MiB segment, b's small one, and the trace
# ending in this snapshot's entry.
python3 - "$MNT/snapshot/device0.pickle" <<'PY' || fail "snapshot/device0.pickle"
import pickle, sys
data = pickle.load(open(sys.argv[1], "rb"))
assert list(data) == ["segments", "device_traces"], list(data)
segs = data["segments"]
assert [(s["segment_type"], s["total_size"], s["allocated_size"]) for s in segs] == \
    [("large", 20971520, 0), ("small", 2097152, 4608)], segs
assert segs[1]["segment_pool_id"] == (0, 0)
assert [b["state"] for b in segs[0]["blocks"]] == ["inactive"]
blocks = segs[1]["blocks"]
assert [(b["size"], b["requested_size"], b["state"]) for b in blocks][0] == \
    (4608, 4096, "active_allocated"), blocks
assert sum(b["size"] for b in blocks) == segs[1]["total_size"]
traces = data["device_traces"]
assert len(traces) == 1
actions = [e["action"] for e in traces[0]]
assert actions == ["segment_alloc", "alloc", "free_requested", "free_completed",
                   "segment_alloc", "alloc", "snapshot"], actions
assert traces[0][-1]["size"] == 4608 and traces[0][-1]["addr"] == 0
PY

# poll says what a read would do: nothing while the reader has read all,
# POLLIN once an entry comes (within the daemon's 0.1 s tick).
python3 - "$MNT" <<'PY' || fail "poll of trace_pipe/device0"
import os, select, subprocess, sys, time
mnt = sys.argv[1]
fd = os.open(f"{mnt}/trace_pipe/device0", os.O_RDONLY | os.O_NONBLOCK)
while True:
    try:
        os.read(fd, 1 << 16)
    except BlockingIOError:
        break
p = select.poll()
p.register(fd, select.POLLIN)
assert p.poll(300) == [], "POLLIN with nothing to read"
subprocess.run(["truncate", "-s", "1M", f"{mnt}/tensors/device0/p"], check=True)
start = time.monotonic()
events = p.poll(3000)
assert events and events[0][1] & select.POLLIN, events
assert time.monotonic() - start < 1, "poll woke late"
assert os.read(fd, 1 << 16), "POLLIN, yet nothing to read"
os.remove(f"{mnt}/tensors/device0/p")
PY

# At most 4 reads wait at once; the fifth is refused, and killed readers
# stop waiting at once (their reads are interrupted).
READERS=
for i in 1 2 3 4; do
	cat "$TRACE" >/dev/null &
	READERS="$READERS $!"
done
sleep 0.5
expect_fail "cat $TRACE >/dev/null" "Device or resource busy"
START=$(date +%s%N)
kill $READERS
for r in $READERS; do
	wait "$r" 2>/dev/null
done
ELAPSED=$((($(date +%s%N) - START) / 1000000))
[ "$ELAPSED" -lt 1000 ] || fail "killed readers took ${ELAPSED} ms to stop waiting"
# Their places are free again: a new reader waits (until timeout) rather than EBUSY.
STATUS=0
timeout 1 cat "$TRACE" >/dev/null 2>"$WORK/cat.err" || STATUS=$?
expect_eq "$STATUS" 124 "a reader after the killed ones waits"

echo off >"$CTL"
expect_eq "$(head -n 1 "$CTL")" "device0: off" "recording off"
expect_eq "$(nonblocking_read)" "ENODATA" "non-blocking read after off"

# SIGTERM with a reader waiting: the daemon still exits at once, cleanly.
echo all >"$CTL"
expect_eq "$(head -n 1 "$CTL")" "device0: all max_entries 100000 recorded 0 kept 0" "default max_entries"
cat "$TRACE" >/dev/null 2>&1 &
CAT=$!
sleep 0.3
START=$(date +%s%N)
stop_fs
ELAPSED=$((($(date +%s%N) - START) / 1000000))
expect_eq "$STATUS" 0 "exit status with a waiting reader"
[ "$ELAPSED" -lt 3000 ] || fail "shutdown took ${ELAPSED} ms with a waiting reader"
mounted && fail "still mounted after SIGTERM"
wait "$CAT" 2>/dev/null
grep -q '^npumemfs: memory history: all, 1000 entries per device$' "$DAEMON_ERR" \
	|| fail "no log line for turning recording on"
exit 0
