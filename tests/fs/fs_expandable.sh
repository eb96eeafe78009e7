#!/usr/bin/env bash
# Expandable segments from the ini: a tensor grows and shrinks inside one
# virtual range with its bytes intact; empty_virt_addr_cache unmaps the
# pages nothing uses (memory_reserved drops) but keeps them from the device,
# empty_cache gives them back.
INI_TEXT='[device]
count = 1
capacity = 4GiB
malloc_latency_us = 0
free_latency_us = 0
[allocator]
alloc_conf = expandable_segments:True'
. "$(dirname "$0")/lib.sh"
mount_fs
T=$MNT/tensors/device0
MIB=1048576
free_bytes() { cut -d' ' -f1 "$MNT/devices/device0/mem_info"; }

grep -qxF "expandable_segments True ini" "$MNT/ctl/alloc_conf" \
	|| fail "expandable_segments from the ini: $(cat "$MNT/ctl/alloc_conf")"

# Large-pool pages are 20 MiB: 64 MiB + 32 B needs 4 of them.
head -c 64M /dev/urandom >"$WORK/r"
truncate -s 64M "$T/t" || fail "truncate -s 64M"
dd if="$WORK/r" of="$T/t" bs=1M conv=notrunc status=none || fail "dd into the tensor"
expect_eq "$(value memory_allocated)" 67109376 "allocated after 64M"
expect_eq "$(value memory_reserved)" $((80 * MIB)) "reserved after 64M: 4 pages"

# Growing maps pages after the old block (up to 264 MiB + 1 KiB: 14 pages),
# then frees the old block; its pages stay mapped.
truncate -s 200M "$T/t" || fail "grow to 200M"
cmp -n 64M "$WORK/r" "$T/t" || fail "bytes changed by growing"
expect_eq "$(value memory_reserved)" $((280 * MIB)) "reserved after growing: 14 pages"
truncate -s 10M "$T/t" || fail "shrink to 10M"
cmp -n 10M "$WORK/r" "$T/t" || fail "bytes changed by shrinking"
expect_eq "$(value memory_allocated)" 10486272 "allocated after 10M"
expect_eq "$(value memory_reserved)" $((280 * MIB)) "reserved after shrinking"
FREE=$(free_bytes)
expect_eq "$FREE" $((4096 * MIB - 280 * MIB)) "device free with 14 pages held"

# Only the first page holds the tensor; the other 13 are unmapped.
echo 1 >"$MNT/ctl/empty_virt_addr_cache" || fail "empty_virt_addr_cache"
expect_eq "$(value memory_reserved)" $((20 * MIB)) "reserved after empty_virt_addr_cache"
cmp -n 10M "$WORK/r" "$T/t" || fail "bytes changed by empty_virt_addr_cache"
expect_eq "$(free_bytes)" "$FREE" "unmapped pages are kept from the device"
grep -qF "empty_virt_addr_cache: all devices" "$MNT/log" || fail "log lacks the release"
grep -qxF "last_error: none" "$MNT/ctl/empty_virt_addr_cache" || fail "an error was kept"
echo device0 >"$MNT/ctl/empty_virt_addr_cache" || fail "empty_virt_addr_cache device0"
expect_fail "echo device1 > '$MNT/ctl/empty_virt_addr_cache'" "No such device"

echo 1 >"$MNT/ctl/empty_cache" || fail "empty_cache"
expect_eq "$(value memory_reserved)" $((20 * MIB)) "reserved after empty_cache"
expect_eq "$(free_bytes)" $((4096 * MIB - 20 * MIB)) "empty_cache gives the kept pages back"
cmp -n 10M "$WORK/r" "$T/t" || fail "bytes changed by empty_cache"

rm "$T/t" && echo 1 >"$MNT/ctl/empty_cache"
expect_eq "$(value memory_reserved)" 0 "reserved with nothing live"

stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
