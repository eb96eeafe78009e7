#!/usr/bin/env bash
# README command 1's config: the demo replays a training run that keeps its
# weights and Adam state, so memory_allocated never drops to 0 between
# steps and moves within each one.
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
INI=$SRC/conf/npumemfs.ini
mount_fs
grep -qx 'state: running' "$MNT/workload/replay" || fail "the demo replay is not running"

# Weights (fp16) and Adam's moments (fp32) of the generated model: 1.7 GiB.
PERSISTENT=1841410560
python3 - "$MNT" "$PERSISTENT" <<'PY' || fail "the demo's numbers"
import sys, time
mnt, persistent = sys.argv[1], int(sys.argv[2])
# Wait for the first step to make Adam's state.
for _ in range(600):
    if "rounds: 0" not in open(f"{mnt}/workload/replay").read():
        break
    time.sleep(0.05)
# Read until five values are seen, for up to 10 s: a loaded machine slows
# the replay thread, not what it allocates.
readings = []
for _ in range(500):
    readings.append(int(open(f"{mnt}/devices/device0/memory_allocated").read()))
    if len(set(readings)) >= 5 and len(readings) >= 60:
        break
    time.sleep(0.02)
low = min(readings)
if low < persistent:
    sys.exit(f"memory_allocated fell to {low}, below the {persistent} bytes a run keeps")
if len(set(readings)) < 5:
    sys.exit(f"memory_allocated hardly moves: {sorted(set(readings))}")
PY
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
grep -q '^npumemfs: no leaks$' "$DAEMON_ERR" || fail "no 'no leaks'"
