#!/usr/bin/env bash
# The pinned host allocator as files: pinned/NAME tensors (truncate pins,
# bytes read back, rm frees), host/stats with upstream's numbers for
# 40960 and 81920 bytes, host/stats.json equal to it, host/blocks,
# ctl/host_empty_cache and the two host stat resets, the pinned keys of
# ctl/alloc_conf, and bad input refused with a reason and nothing changed.
INI_TEXT="[device]
count = 1
capacity = 4GiB

[host]
capacity = 1GiB"
. "$(dirname "$0")/lib.sh"
mount_fs

H=$MNT/host/stats

expect_eq "$(wc -l <"$H")" 28 "host/stats keys"
expect_eq "$(host_stat allocated_bytes.current)" 0 "allocated_bytes at start"

# torch.ones(10 * 1024, pin_memory=True), then torch.ones(20 * 1024, ...)
truncate -s 40960 "$MNT/pinned/t1" || fail "pin 40960 bytes"
expect_eq "$(host_stat allocated_bytes.current)" 65536 "one pinned block of 65536"
expect_eq "$(host_stat allocations.current)" 1 "allocations after t1"
truncate -s 81920 "$MNT/pinned/t2" || fail "pin 81920 bytes"
expect_eq "$(host_stat allocated_bytes.current)" 196608 "two blocks, 196608 bytes"
expect_eq "$(host_stat num_host_alloc)" 2 "num_host_alloc"
expect_eq "$(host_stat host_alloc_time.count)" 2 "host_alloc_time.count"
expect_eq "$(stat -c %s "$MNT/pinned/t1")" 40960 "pinned/t1 size"

# host/stats.json is the same numbers, nested.
python3 - "$H" "$MNT/host/stats.json" <<'PY' || fail "host/stats.json differs from host/stats"
import json, sys
flat = dict(l.split() for l in open(sys.argv[1]))
nested = json.load(open(sys.argv[2]))
for k, v in flat.items():
    node = nested
    for part in k.split('.'):
        node = node[part]
    assert node == int(v), (k, node, v)
PY

# Bytes written into pinned memory read back unchanged, through host_empty_cache.
head -c 40960 /dev/urandom >"$WORK/bytes"
dd if="$WORK/bytes" of="$MNT/pinned/t1" conv=notrunc status=none || fail "write pinned/t1"
echo 1 >"$MNT/ctl/host_empty_cache" || fail "host_empty_cache"
expect_eq "$(host_stat allocations.current)" 2 "host_empty_cache with both live changes nothing"
cmp -s "$WORK/bytes" "$MNT/pinned/t1" || fail "pinned bytes changed"
grep -q "^0x[0-9a-f]* 65536 65536 0_0 allocated 0 - no$" "$MNT/host/blocks" ||
	fail "host/blocks: $(cat "$MNT/host/blocks")"

# rm frees into the cache; host_empty_cache gives it back.
rm "$MNT/pinned/t1" "$MNT/pinned/t2"
expect_eq "$(host_stat active_bytes.current)" 0 "active after rm"
expect_eq "$(host_stat allocated_bytes.current)" 196608 "cached after rm"
echo 1 >"$MNT/ctl/host_empty_cache"
expect_eq "$(host_stat allocated_bytes.current)" 0 "allocated after host_empty_cache"
expect_eq "$(host_stat num_host_free)" 2 "num_host_free"

echo 1 >"$MNT/ctl/reset_accumulated_host_memory_stats" || fail "reset accumulated"
expect_eq "$(host_stat allocated_bytes.allocated)" 0 "allocated total after reset"
echo 1 >"$MNT/ctl/reset_peak_host_memory_stats" || fail "reset peak"
expect_eq "$(host_stat allocated_bytes.peak)" 0 "peak after reset"

# The pinned keys of ctl/alloc_conf: a threshold applies, the variant cannot change.
echo pinned_max_round_threshold_mb:64 >"$MNT/ctl/alloc_conf" || fail "set the round threshold"
truncate -s 80M "$MNT/pinned/big"
expect_eq "$(host_stat allocated_bytes.current)" 83886080 "80 MiB above the threshold stays 80 MiB"
rm "$MNT/pinned/big"
expect_fail "echo pin_memory_expandable_segments:True >$MNT/ctl/alloc_conf" "Device or resource busy"
case "$(last_error "$MNT/ctl/alloc_conf")" in
*"pin_memory_expandable_segments cannot change at run time"*) ;;
*) fail "alloc_conf last_error: $(last_error "$MNT/ctl/alloc_conf")" ;;
esac
grep -q "^pin_memory_expandable_segments False default$" "$MNT/ctl/alloc_conf" ||
	fail "pin_memory_expandable_segments changed"

# Every new control refuses anything but 1, with a reason, and changes nothing.
before=$(cat "$H")
for ctl in host_empty_cache reset_peak_host_memory_stats reset_accumulated_host_memory_stats; do
	expect_fail "echo device0 >$MNT/ctl/$ctl" "Invalid argument"
	expect_eq "$(last_error "$MNT/ctl/$ctl")" "'device0' is not 1 (the host allocator is one)" \
		"$ctl last_error"
done
expect_eq "$(cat "$H")" "$before" "refused controls changed host/stats"

# A pin beyond the host capacity: ENOMEM, the tensor keeps its block.
truncate -s 4096 "$MNT/pinned/small"
expect_fail "truncate -s 2G $MNT/pinned/small" "Cannot allocate memory"
expect_eq "$(stat -c %s "$MNT/pinned/small")" 4096 "a refused pin keeps the tensor"
grep -q "pinned/small: NPU function error: aclrtMallocHost, error code is 207001" "$MNT/log" ||
	fail "the refused pin is not in the log"
rm "$MNT/pinned/small"
stop_fs
expect_eq "$STATUS" 0 "daemon exit status"
