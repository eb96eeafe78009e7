#!/usr/bin/env bash
# mount_fuzz.sh - random and mutated values (from each file's documented
# syntax, plus garbage, long values, NULs, newlines, split writes) written
# to every writable file for DURATION seconds (default 60). Prints writes
# by file and errno; fails if the daemon dies, or if at shutdown its
# invariant check fails or memory leaks. Never on timing.
#   DURATION=600 NPUMEMFS=build/bin/npumemfs PLUGIN_DIR=build/lib bash tests/soak/mount_fuzz.sh
PLUGIN_DIR=${PLUGIN_DIR:-}
INI_TEXT="[device]
count = 2
capacity = 4GiB
[allocator]
plugin_dirs = ${PLUGIN_DIR}"
. "$(dirname "$0")/../fs/lib.sh"
DURATION=${DURATION:-60}
mount_fs
PYTHONDONTWRITEBYTECODE=1 python3 "$(dirname "$0")/mount_fuzz.py" "$MNT" "$PID" "$DURATION" \
	"$WORK" ${PLUGIN_DIR:+"$PLUGIN_DIR"}
rc=$?
kill -0 "$PID" 2>/dev/null || fail "the daemon died"
[ "$rc" -eq 0 ] || fail "the fuzzer failed"
stop_fs
grep -q '^npumemfs: invariant check: ok$' "$DAEMON_ERR" || fail "no 'invariant check: ok'"
grep -q '^npumemfs: no leaks$' "$DAEMON_ERR" || fail "no 'no leaks'"
expect_eq "$STATUS" 0 "exit status after SIGTERM"
echo PASS
