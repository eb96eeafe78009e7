#!/usr/bin/env bash
# With allow_other, waiting readers of trace_pipe/deviceN are limited per user:
# another user waits once at a time, other users together twice, and the
# mount's owner always keeps the remaining places.
INI_TEXT='[device]
count = 1
capacity = 4GiB
[fs]
allow_other = true'
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root to read as other users"
command -v setpriv >/dev/null || skip "setpriv is not installed"
chmod 0755 "$WORK"
mount_fs
echo all >"$MNT/ctl/record_memory_history" || fail "recording on"
TRACE=$MNT/trace_pipe/device0

# as UID CMD: run CMD as user UID (no groups), in this process.
as() {
	local uid=$1
	shift
	setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"
}
READERS=
wait_as() { # UID: a reader of UID that waits in the background
	setpriv --reuid="$1" --regid="$1" --clear-groups cat "$TRACE" >/dev/null 2>&1 &
	READERS="$READERS $!"
	sleep 0.3
	kill -0 "$!" 2>/dev/null || fail "user $1's reader did not wait"
}
refused_as() { # UID
	local out
	out=$(as "$1" timeout 5 cat "$TRACE" 2>&1 >/dev/null) && fail "user $1 was let wait"
	case "$out" in
	*"Device or resource busy"*) ;;
	*) fail "user $1: expected EBUSY, got: $out" ;;
	esac
}

# With allow_other the kernel holds other users to the modes.
grep -q "^npumemfs $MNT .*default_permissions" /proc/mounts ||
	fail "allow_other without default_permissions"
as 65534 cat "$MNT/stats/device0" >/dev/null || fail "another user cannot read stats"
out=$(as 65534 cat "$MNT/ctl/empty_cache" 2>&1 >/dev/null) &&
	fail "another user read a 0600 control file"
case "$out" in *"Permission denied"*) ;; *) fail "0600 to another user: $out" ;; esac

wait_as 65534
refused_as 65534          # one wait per other user
wait_as 65533
refused_as 65532          # other users hold two places at most
wait_as 0                 # the owner keeps the other two
wait_as 0
refused_as 0              # four in all
kill $READERS
for r in $READERS; do
	wait "$r" 2>/dev/null
done
READERS=
sleep 1                   # the killed readers' waits end within a poll
wait_as 65532             # places come back when readers go
kill $READERS
wait $READERS 2>/dev/null
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
