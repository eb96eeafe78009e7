#!/usr/bin/env bash
# fusermount3 -u ends the daemon as cleanly as a signal does.
. "$(dirname "$0")/lib.sh"
mount_fs

truncate -s 2M "$MNT/tensors/device0/t"
fusermount3 -u "$MNT" || fail "fusermount3 -u"
STATUS=0
timeout 20 tail --pid="$PID" -f /dev/null || fail "daemon still running 20 s after unmount"
wait "$PID" || STATUS=$?
PID=
expect_eq "$STATUS" 0 "exit status after fusermount3 -u"
grep -q '^npumemfs: shutdown: freed 1 tensor (2097152 bytes) on device0$' "$DAEMON_ERR" \
	|| fail "the live tensor was not reported freed"
grep -q '^npumemfs: invariant check: ok$' "$DAEMON_ERR" || fail "no 'invariant check: ok'"
grep -q '^npumemfs: no leaks$' "$DAEMON_ERR" || fail "no 'no leaks'"
