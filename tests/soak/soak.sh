#!/usr/bin/env bash
# soak.sh - npumemfs under load for DURATION seconds (default 60): 16 readers
# of the views, a tensor writer checking every byte it wrote, a control
# writer (empty_cache, reset_peak_stats, alloc_conf, graphs, memory pools),
# a blocking trace reader; the daemon's RSS sampled. Prints the counts;
# fails on a mismatch, a failed read, the daemon's death, or an invariant
# check or leak at shutdown. Never on timing.
#   DURATION=600 NPUMEMFS=build/bin/npumemfs bash tests/soak/soak.sh
INI_TEXT='[device]
count = 1
capacity = 8GiB'
. "$(dirname "$0")/../fs/lib.sh"
DURATION=${DURATION:-60}
mount_fs
PYTHONDONTWRITEBYTECODE=1 python3 "$(dirname "$0")/soak.py" "$MNT" "$PID" "$DURATION"
rc=$?
kill -0 "$PID" 2>/dev/null || fail "the daemon died"
stop_fs
grep -q '^npumemfs: invariant check: ok$' "$DAEMON_ERR" || fail "no 'invariant check: ok'"
grep -q '^npumemfs: no leaks$' "$DAEMON_ERR" || fail "no 'no leaks'"
expect_eq "$STATUS" 0 "exit status after SIGTERM"
[ "$rc" -eq 0 ] || fail "the soak found mismatches"
echo PASS
