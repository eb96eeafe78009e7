#!/usr/bin/env bash
# Tools that walk the tree finish, and trust what a stat says: find with
# wc, grep -r, du, tar, rsync, cp -r and shutil.copytree on a live mount
# (recording on, tensors, a replay looping), then on a quiet one, where
# tar must not see a file change as it reads and a second rsync -a must
# copy nothing. The one file that waits, trace_pipe/deviceN, is never met.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
command -v rsync >/dev/null || skip "rsync is not installed (contrib/setup-debian.sh)"
mount_fs

head -c 5000 /dev/urandom >"$MNT/tensors/device0/t"

# $1: what; the rest: a command that must end within 20 s with status 0.
finishes() {
	local what=$1 status=0
	shift
	timeout 20 "$@" >"$WORK/out" 2>"$WORK/err" || status=$?
	[ "$status" -eq 124 ] && fail "$what did not finish"
	[ "$status" -eq 0 ] || fail "$what exited $status: $(head -c 600 "$WORK/err")"
}

walk_all() {
	finishes "find | xargs wc -c" sh -c "find '$MNT' -type f | xargs wc -c"
	local status=0
	timeout 20 grep -r x "$MNT" >/dev/null 2>"$WORK/err" || status=$?
	[ "$status" -le 1 ] || fail "grep -r exited $status: $(head -c 600 "$WORK/err")"
	rm -rf "$WORK/cp" "$WORK/tree"
	finishes "cp -r" cp -r "$MNT" "$WORK/cp"
	finishes "shutil.copytree" python3 -c 'import shutil, sys; shutil.copytree(sys.argv[1], sys.argv[2])' \
		"$MNT" "$WORK/tree"
	finishes "du -a" du -a "$MNT"
}

# Quiet (nothing happening; recording off, as each read of the pickle
# records a snapshot entry, as upstream's _snapshot() does): du's blocks
# follow sizes, tar sees no file change as it reads, and a second rsync -a
# copies nothing.
walk_all
blocks=$(awk '$2 ~ /\/stats\/device0$/ { print $1 }' "$WORK/out")
[ "${blocks:-0}" -gt 0 ] || fail "du -a gives stats/device0 '$blocks' blocks"
expect_eq "$(stat -c %b "$MNT/tensors/device0/t")" 10 "blocks of a 5000-byte tensor"
finishes "tar cf" tar cf "$WORK/quiet.tar" -C "$MNT" .
finishes "tar cf again" tar cf "$WORK/quiet.tar" -C "$MNT" .
finishes "rsync -a" rsync -a "$MNT/" "$WORK/rsync/"
sleep 1.1 # a time of "now" at every stat would differ by then
finishes "rsync -a again" rsync -ai "$MNT/" "$WORK/rsync/"
# The history chart is the last minute up to now: it moves with the clock.
grep '^>f' "$WORK/out" | grep -v 'history\.svg$' >"$WORK/copied" &&
	fail "a second rsync -a copied: $(head -5 "$WORK/copied")"
cmp -s "$WORK/rsync/tensors/device0/t" "$WORK/cp/tensors/device0/t" || fail "rsync's tensor bytes"

# A file's time is when its content last changed: the same until it does.
before=$(stat -c '%y %s' "$MNT/stats/device0")
log_before=$(stat -c %Y "$MNT/log")
sleep 1.1
expect_eq "$(stat -c '%y %s' "$MNT/stats/device0")" "$before" "stats/device0 unchanged"
echo device0 >"$MNT/ctl/reset_peak_stats"
truncate -s 8192 "$MNT/tensors/device0/t"
[ "$(stat -c '%y %s' "$MNT/stats/device0")" != "$before" ] || fail "stats/device0 changed, its time did not"
[ "$(stat -c %Y "$MNT/log")" -gt "$log_before" ] || fail "a new log line, the log's time did not move"
age=$(($(date +%s) - $(stat -c %Y "$MNT/tensors/device0/t")))
[ "$age" -le 1 ] || fail "a tensor resized now is ${age} s old"

# Live: recording on and a replay looping while the tools walk.
echo all >"$MNT/ctl/record_memory_history"
printf '%s\n' 'alloc a 4096' 'alloc b 3000000' 'free a' 'free b' >"$WORK/run.trace"
echo "loop $WORK/run.trace" >"$MNT/workload/replay"
walk_all
finishes "tar cf (live)" tar cf "$WORK/live.tar" -C "$MNT" .

# trace_pipe/ is there by name only.
ls "$MNT" | grep -qx trace_pipe && fail "trace_pipe/ is listed"
[ -f "$MNT/trace_pipe/device0" ] || fail "trace_pipe/device0 is missing"
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
