#!/usr/bin/env bash
# plugin_crash.sh - a plug-in that crashes (a real null-pointer write, an
# abort) costs the daemon nothing but that plug-in: the mount stays, other
# tensors keep their bytes, the log says who faulted where.
# Under ASan the sanitizer's own fault handlers would report the crash and
# end the daemon before its barrier could: this test is about the barrier.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0"
. "$(dirname "$0")/plugin_lib.sh"
mount_fs

# A tensor of the caching allocator and one of a well-behaved plug-in.
head -c 1048576 /dev/urandom >"$WORK/bytes"
cp "$WORK/bytes" "$MNT/tensors/device0/cached"
use "$PLUGIN_DIR/passthrough.so passthrough_alloc_silent passthrough_free_silent"
cp "$WORK/bytes" "$MNT/tensors/device0/passed"

use "$PLUGIN_DIR/faulty.so faulty_segv_alloc faulty_free"
expect_fail "truncate -s 4096 '$MNT/tensors/device0/crash'" "Bad address"
grep -q 'faulted in faulty_segv_alloc: signal 11 (Segmentation fault) at (nil)' "$MNT/log" ||
	fail "log does not name the function, signal and address: $(tail -3 "$MNT/log")"
grep -q 'allocator plugin2: .*the caching allocator is current' "$MNT/log" ||
	fail "log does not say the plug-in was retired"
expect_eq "$(current)" caching "current allocator after the crash"
cmp "$WORK/bytes" "$MNT/tensors/device0/cached" || fail "the caching allocator's tensor changed"
cmp "$WORK/bytes" "$MNT/tensors/device0/passed" || fail "plugin1's tensor changed"
truncate -s 4096 "$MNT/tensors/device0/after"

# abort() in a free: the tensor goes, its block is lost, nothing else.
use "$PLUGIN_DIR/faulty.so faulty_alloc faulty_abort_free"
truncate -s 8192 "$MNT/tensors/device0/doomed"
rm "$MNT/tensors/device0/doomed"
[ -e "$MNT/tensors/device0/doomed" ] && fail "doomed is still there"
grep -q 'faulted in faulty_abort_free: signal 6 (Aborted)' "$MNT/log" ||
	fail "log does not name the abort"
expect_eq "$(current)" caching "current allocator after the abort"
cmp "$WORK/bytes" "$MNT/tensors/device0/cached" || fail "the caching allocator's tensor changed"

# A crash in the init hook refuses the load; what was current stays.
expect_fail "echo '$PLUGIN_DIR/faulty.so faulty_alloc faulty_free init=faulty_init_crash' >'$CTL'" \
	"Bad address"
grep -q "last_error: the init hook of .*faulty.so faulted: signal 11 (Segmentation fault)" "$CTL" ||
	fail "no reason in: $(grep last_error "$CTL")"
expect_eq "$(current)" caching "current allocator after a crash in init"

rm "$MNT/tensors/device0/cached" "$MNT/tensors/device0/passed" "$MNT/tensors/device0/after"
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
