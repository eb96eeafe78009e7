#!/usr/bin/env bash
# workload/replay: a trace written to it is replayed in the background; its
# status shows progress and counts; a bad trace is refused whole with its
# line number; a new replay first frees what the previous one held; 'loop'
# replays the last trace again and again.
. "$(dirname "$0")/lib.sh"
mount_fs

printf '%s\n' '# two allocations, one freed, one too large for the 4 GiB device' \
	'alloc a 1MiB' 'alloc b 64MiB' 'free a' 'alloc huge 8GiB' >"$WORK/one.trace"
echo "$WORK/one.trace" >"$MNT/workload/replay" || fail "starting a replay"
wait_state done
status=$(cat "$MNT/workload/replay")
for line in "trace: $WORK/one.trace" "rounds: 1" "events: 4/4" "allocs: 2" "frees: 1" \
	"ooms: 1" "error: none" "last_error: none"; do
	grep -qxF "$line" <<<"$status" || fail "status lacks '$line': $status"
done
# The replay thread's own CPU time, and events per CPU second from it.
grep -qE '^cpu_seconds: [0-9]+\.[0-9]{3}$' <<<"$status" || fail "no cpu_seconds: $status"
grep -qE '^events_per_cpu_second: [0-9]+$' <<<"$status" || fail "no events_per_cpu_second: $status"
expect_eq "$(value memory_allocated)" 67109376 "b stays allocated after the replay"
grep -q '^num_ooms 1$' "$MNT/stats/device0" || fail "the OOM is not counted"

printf '%s\n' 'alloc a 1MiB' 'frobnicate 3' >"$WORK/bad.trace"
expect_fail "echo '$WORK/bad.trace' > '$MNT/workload/replay'" "Invalid argument"
grep -q "^last_error: $WORK/bad.trace:2: " "$MNT/workload/replay" \
	|| fail "last_error does not name line 2: $(cat "$MNT/workload/replay")"
expect_eq "$(value memory_allocated)" 67109376 "a bad trace changes nothing"

# A FIFO, a device or a folder is no trace: refused at once, never waited on.
mkfifo "$WORK/fifo.trace"
expect_fail "timeout 10 bash -c \"echo '$WORK/fifo.trace' > '$MNT/workload/replay'\"" "Invalid argument"
grep -q "^last_error: $WORK/fifo.trace: not a regular file" "$MNT/workload/replay" \
	|| fail "last_error does not explain the FIFO: $(cat "$MNT/workload/replay")"
expect_fail "echo /dev/zero > '$MNT/workload/replay'" "Invalid argument"
expect_fail "echo '$WORK' > '$MNT/workload/replay'" "Is a directory"
expect_eq "$(value memory_allocated)" 67109376 "refused paths change nothing"

printf '%s\n' 'alloc c 2MiB' >"$WORK/two.trace"
echo "$WORK/two.trace" >"$MNT/workload/replay" || fail "a second replay"
wait_state done
expect_eq "$(value memory_allocated)" 2097664 "only the second replay's block is live"

check_stats_consistent 0

# After a one-shot replay, 'loop' brings the last trace back, looping.
expect_fail "echo 'loop x' > '$MNT/workload/replay'" "Invalid argument"
grep -q "^last_error: 'loop x' is not an absolute trace path, 'loop PATH', 'loop', 'stop' or 'start'$" \
	"$MNT/workload/replay" || fail "last_error of 'loop x': $(cat "$MNT/workload/replay")"
echo loop >"$MNT/workload/replay" || fail "'loop' after a one-shot replay"
grep -qx "trace: $WORK/two.trace" "$MNT/workload/replay" || fail "'loop' took another trace"
grep -qx "loop: true" "$MNT/workload/replay" || fail "'loop' does not loop"
for _ in $(seq 100); do
	[ "$(sed -n 's/^rounds: //p' "$MNT/workload/replay")" -ge 3 ] && break
	sleep 0.05
done
[ "$(sed -n 's/^rounds: //p' "$MNT/workload/replay")" -ge 3 ] || fail "'loop' did not go round"
grep -qx "state: running" "$MNT/workload/replay" || fail "the loop stopped"
expect_fail "echo '$WORK/one.trace' > '$MNT/workload/replay'" "Device or resource busy"
echo 1 >"$MNT/ctl/empty_cache"

stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
grep -q '^npumemfs: invariant check: ok$' "$DAEMON_ERR" || fail "no 'invariant check: ok'"
grep -q '^npumemfs: no leaks$' "$DAEMON_ERR" || fail "no 'no leaks'"
