#!/usr/bin/env bash
# SIGTERM with live tensors: the daemon unmounts, frees the tensors, finds
# the allocator consistent, reports no leak and exits 0.
. "$(dirname "$0")/lib.sh"
mount_fs

truncate -s 64M "$MNT/tensors/device0/weights"
head -c 1048576 /dev/urandom >"$MNT/tensors/device0/grad"
# The 1 MiB tensor (1049088 bytes rounded) fits the 2096640-byte tail of
# the 64 MiB segment; the rest would be under 1 MiB, so upstream does not
# split and the whole tail is allocated.
expect_eq "$(value memory_allocated)" "$((67109376 + 2096640))" "two live tensors"

# A file still open at shutdown never gets its RELEASE: the daemon frees
# the handle itself (a leak here fails the sanitizer builds).
exec 3<"$MNT/stats/device0"
stop_fs
exec 3<&-
expect_eq "$STATUS" 0 "exit status after SIGTERM"
mounted && fail "still mounted after SIGTERM"
grep -q '^npumemfs: signal 15: unmounting$' "$DAEMON_ERR" || fail "no signal message"
grep -q '^npumemfs: shutdown: freed 2 tensors (68157440 bytes) on device0$' "$DAEMON_ERR" \
	|| fail "the live tensors were not reported freed"
grep -q '^npumemfs: invariant check: ok$' "$DAEMON_ERR" || fail "no 'invariant check: ok'"
grep -q '^npumemfs: no leaks$' "$DAEMON_ERR" || fail "no 'no leaks'"
