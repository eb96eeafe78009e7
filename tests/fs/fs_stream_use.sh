#!/usr/bin/env bash
# ctl/stream_use: tensor.record_stream(stream) and torch_npu.erase_stream
# on a tensor file. A recorded block, once its tensor is removed, is no
# longer allocated but stays active (pending free) until the work queued
# on the stream it was used on is done (a sync) and the next malloc
# processes the event, as upstream's process_events does; an erase before
# the rm frees it at once. Refusals show as last_error.
. "$(dirname "$0")/lib.sh"
mount_fs

C=$MNT/ctl/stream_use
stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$MNT/stats/device0"; }
expect_stats() { # allocated active active_count what
	expect_eq "$(stat_of allocated_bytes.all.current)" "$1" "$4: allocated_bytes.all.current"
	expect_eq "$(stat_of active_bytes.all.current)" "$2" "$4: active_bytes.all.current"
	expect_eq "$(stat_of active.all.current)" "$3" "$4: active.all.current"
}

# 4000 bytes take a 4096-byte block ((4000 + 32) rounded to 512).
truncate -s 4000 "$MNT/tensors/device0/a" || fail "tensor a"
# A kernel on stream 1 reads a: work there until the stream syncs.
echo "launch stream=1 workspace=0" >"$MNT/ctl/op" || fail "work on stream 1"
echo "record tensors/device0/a stream=1" >"$C" || fail "record a on stream 1"
grep -q "stream_use: record tensors/device0/a stream=1" "$MNT/log" || fail "not in the log"
rm "$MNT/tensors/device0/a"
expect_stats 0 4096 1 "a freed block used on stream 1"
# Stream 1 has not synced: the next malloc cannot take the block.
truncate -s 4000 "$MNT/tensors/device0/b" || fail "tensor b"
expect_stats 4096 8192 2 "b beside the pending block"
# Once stream 1 syncs, the next malloc processes the event and frees it.
echo "sync stream=1" >"$MNT/ctl/op" || fail "sync stream 1"
truncate -s 4000 "$MNT/tensors/device0/c" || fail "tensor c"
expect_stats 8192 8192 2 "after stream 1 syncs"

# erase before the rm: the block goes back at once.
echo "launch stream=2 workspace=0" >"$MNT/ctl/op" || fail "work on stream 2"
echo "record tensors/device0/c stream=2" >"$C" || fail "record c on stream 2"
echo "erase /tensors/device0/c stream=2" >"$C" || fail "erase c from stream 2"
rm "$MNT/tensors/device0/c"
expect_stats 4096 4096 1 "c erased, then freed"

# A tensor on stream 1 used on the default stream.
truncate -s 4000 "$MNT/tensors/device0/stream1/d" || fail "tensor d on stream 1"
echo "record tensors/device0/stream1/d stream=0" >"$C" || fail "record d on stream 0"

# Refusals, with their reasons.
expect_fail "echo 'record tensors/device0/nothere stream=1' >$C" "No such file"
expect_eq "$(last_error "$C")" "no tensor tensors/device0/nothere" "unknown tensor"
touch "$MNT/tensors/device0/empty"
expect_fail "echo 'record tensors/device0/empty stream=1' >$C" "Invalid argument"
expect_eq "$(last_error "$C")" "tensor empty is empty: it has no block to use on a stream" \
	"empty tensor"
expect_fail "echo 'record tensors/device0/b stream=9' >$C" "Invalid argument"
expect_eq "$(last_error "$C")" "'stream=9': stream is a number 0..8" "stream out of range"
expect_fail "echo 'record tensors/device0/b' >$C" "Invalid argument"
expect_eq "$(last_error "$C")" "'record tensors/device0/b' is not 'record TENSOR stream=S' or \
'erase TENSOR stream=S', TENSOR tensors/deviceN[/streamS]/NAME" "no stream"
expect_fail "echo 'record stats/device0 stream=1' >$C" "Invalid argument"
expect_eq "$(last_error "$C")" \
	"stats/device0 is not a tensor file (tensors/deviceN[/streamS]/NAME)" "not a tensor"
expect_stats 8192 8192 2 "the refusals changed nothing"
stop_fs
expect_eq "$STATUS" 0 "daemon exit status"
