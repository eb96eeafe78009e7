#!/usr/bin/env bash
# The start-up replay from the ini: a relative path is found beside the
# ini, the trace loops so a fresh mount shows live numbers, a second replay
# is refused while it runs, and SIGTERM stops it with nothing leaked.
INI_TEXT='[device]
capacity = 4GiB
malloc_latency_us = 20
[workload]
replay = traces/loop.trace
loop = true'
WORK_TRACE_LINES='alloc a 3MiB
alloc b 40MiB
free a
alloc c 512KiB
free b
free c'
. "$(dirname "$0")/lib.sh"
mkdir "$WORK/traces"
printf '%s\n' "$WORK_TRACE_LINES" >"$WORK/traces/loop.trace"
mount_fs

grep -q '^state: running$' "$MNT/workload/replay" || fail "the start-up replay is not running"
grep -q "^trace: $WORK/traces/loop.trace$" "$MNT/workload/replay" || fail "trace path"
grep -q '^loop: true$' "$MNT/workload/replay" || fail "loop flag"
rounds() { sed -n 's/^rounds: //p' "$MNT/workload/replay"; }
r0=$(rounds)
sleep 0.3
[ "$(rounds)" -gt "$r0" ] || fail "rounds do not advance: $(rounds) after $r0"
[ "$(sed -n 's/^allocation.all.allocated //p' "$MNT/stats/device0")" -gt 3 ] \
	|| fail "stats do not move"

printf 'alloc x 1MiB\n' >"$WORK/other.trace"
expect_fail "echo '$WORK/other.trace' > '$MNT/workload/replay'" "Device or resource busy"
grep -q "^last_error: a replay of $WORK/traces/loop.trace is running$" "$MNT/workload/replay" \
	|| fail "last_error does not explain EBUSY"

stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
grep -q "^npumemfs: replay $WORK/traces/loop.trace stopped after" "$DAEMON_ERR" \
	|| fail "the replay was not reported stopped"
grep -q '^npumemfs: invariant check: ok$' "$DAEMON_ERR" || fail "no 'invariant check: ok'"
grep -q '^npumemfs: no leaks$' "$DAEMON_ERR" || fail "no 'no leaks'"
