#!/usr/bin/env bash
# ctl/copy: non-blocking copies between pinned/NAME and a tensor on a
# stream. The bytes arrive both ways; the pinned block records the copy's
# stream, so once freed it stays pending (host/blocks) until that stream
# syncs, and only then goes back to the cache; bad input is refused with
# a reason and changes nothing.
INI_TEXT="[device]
count = 2"
. "$(dirname "$0")/lib.sh"
mount_fs

H=$MNT/host/stats
# The state of the pinned block at address $1 in host/blocks.
state_at() { awk -v a="$1" '$1 == a { print $5 }' "$MNT/host/blocks"; }
only_block() { awk 'NR == 2 { print $1 }' "$MNT/host/blocks"; }

# pinned -> device: pin 4000 bytes, fill them, copy them to a tensor on stream 1.
truncate -s 4000 "$MNT/pinned/src" || fail "pin 4000 bytes"
head -c 4000 /dev/urandom >"$WORK/bytes"
dd if="$WORK/bytes" of="$MNT/pinned/src" conv=notrunc status=none || fail "fill pinned/src"
truncate -s 4000 "$MNT/tensors/device0/stream1/dst" || fail "tensor on stream 1"
echo "pinned/src tensors/device0/stream1/dst" >"$MNT/ctl/copy" || fail "h2d copy"
cmp -s "$WORK/bytes" "$MNT/tensors/device0/stream1/dst" || fail "h2d copy: the bytes differ"
grep -q "copy: pinned/src -> tensors/device0/stream1/dst (h2d, non_blocking)" "$MNT/log" ||
	fail "the copy is not in the log"

# The block records stream 1: freed now, it waits for the copy's stream.
addr=$(only_block)
rm "$MNT/pinned/src"
expect_eq "$(state_at "$addr")" pending "a freed block used by a copy in flight"
expect_eq "$(host_stat active_bytes.current)" 4096 "a pending block stays active"
echo 1 >"$MNT/ctl/host_empty_cache"
expect_eq "$(host_stat allocated_bytes.current)" 4096 "host_empty_cache keeps a pending block"
echo "sync stream=1" >"$MNT/ctl/op" || fail "sync stream 1"
echo 1 >"$MNT/ctl/host_empty_cache"
expect_eq "$(host_stat allocated_bytes.current)" 0 "after the stream syncs, host_empty_cache frees it"
expect_eq "$(host_stat active_bytes.current)" 0 "active after the sync"

# device -> pinned, on the default stream of device 1 (a leading / is fine).
truncate -s 8192 "$MNT/tensors/device1/t" || fail "tensor on device 1"
head -c 8192 /dev/urandom >"$WORK/bytes2"
dd if="$WORK/bytes2" of="$MNT/tensors/device1/t" conv=notrunc status=none
truncate -s 8192 "$MNT/pinned/back"
echo "/tensors/device1/t /pinned/back" >"$MNT/ctl/copy" || fail "d2h copy"
cmp -s "$WORK/bytes2" "$MNT/pinned/back" || fail "d2h copy: the bytes differ"
grep -q "copy: /tensors/device1/t -> /pinned/back (d2h, non_blocking)" "$MNT/log" ||
	fail "the d2h copy is not in the log"

# Bad input: refused with errno and reason, nothing changed.
truncate -s 100 "$MNT/pinned/small"
truncate -s 4000 "$MNT/tensors/device0/t0"
before=$(cat "$H" "$MNT/host/blocks")
expect_fail "echo 'pinned/small' >$MNT/ctl/copy" "Invalid argument"
expect_eq "$(last_error "$MNT/ctl/copy")" \
	"'pinned/small' is not 'SRC DST': pinned/NAME and tensors/deviceN[/streamS]/NAME, either way round" \
	"one word"
expect_fail "echo 'pinned/small tensors/device0/t0 extra' >$MNT/ctl/copy" "Invalid argument"
expect_fail "echo 'pinned/small tensors/device0/t0' >$MNT/ctl/copy" "Invalid argument"
expect_eq "$(last_error "$MNT/ctl/copy")" \
	"the pinned tensor has 100 bytes and tensor t0 4000: copy_ needs equal sizes" "sizes"
expect_fail "echo 'pinned/nothere tensors/device0/t0' >$MNT/ctl/copy" "No such file"
expect_eq "$(last_error "$MNT/ctl/copy")" "no file pinned/nothere" "unknown pinned"
expect_fail "echo 'pinned/small pinned/back' >$MNT/ctl/copy" "Invalid argument"
expect_eq "$(last_error "$MNT/ctl/copy")" \
	"pinned/small and pinned/back: a copy is between a pinned tensor and a tensor on a device" \
	"two pinned"
expect_fail "echo 'tensors/device0/t0 tensors/device1/t' >$MNT/ctl/copy" "Invalid argument"
expect_fail "echo 'stats/device0 pinned/small' >$MNT/ctl/copy" "Invalid argument"
expect_eq "$(last_error "$MNT/ctl/copy")" "stats/device0 is neither pinned/NAME nor a tensor file" \
	"a stats file"
expect_fail "echo 'pinned/small tensors/device7/t' >$MNT/ctl/copy" "No such file"
expect_eq "$(cat "$H" "$MNT/host/blocks")" "$before" "refused copies changed the host allocator"
grep -q "usage: echo VALUE > copy" "$MNT/ctl/copy" || fail "ctl/copy shows no usage"

rm "$MNT/pinned/small" "$MNT/pinned/back"
stop_fs
expect_eq "$STATUS" 0 "daemon exit status"
