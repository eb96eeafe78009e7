#!/usr/bin/env bash
# Four readers cat the views in a loop while tensors are created, resized
# and removed: no read fails, the views stay consistent, and the
# allocator's invariant check passes at shutdown.
INI_TEXT='[device]
count = 1
capacity = 8GiB'
. "$(dirname "$0")/lib.sh"
mount_fs

reader() { # file
	while [ ! -e "$WORK/stop" ]; do
		cat "$MNT/$1" >/dev/null || { echo "cat $1 failed" >"$WORK/reader-failed"; return; }
	done
}
for f in stats/device0 stats/device0.json summary/device0 snapshot/device0.json; do
	reader "$f" &
done

T=$MNT/tensors/device0
for i in $(seq 1 60); do
	truncate -s "$((i % 7 + 1))M" "$T/a$((i % 5))" || fail "truncate a$((i % 5))"
	head -c 65536 /dev/urandom >"$T/b$((i % 3))" || fail "write b$((i % 3))"
	[ $((i % 4)) -eq 0 ] && { rm -f "$T/a$((i % 5))" || fail "rm"; }
	[ $((i % 10)) -eq 0 ] && { echo 1 >"$MNT/ctl/empty_cache" || fail "empty_cache"; }
done
touch "$WORK/stop"
wait $(jobs -p | grep -v "^$PID$") 2>/dev/null
[ -e "$WORK/reader-failed" ] && fail "$(cat "$WORK/reader-failed")"

check_stats_consistent 0
rm -f "$T"/*
expect_eq "$(value memory_allocated)" 0 "memory_allocated with no tensors"

stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
grep -q '^npumemfs: invariant check: ok$' "$DAEMON_ERR" || fail "no 'invariant check: ok'"
grep -q '^npumemfs: no leaks$' "$DAEMON_ERR" || fail "no 'no leaks'"
