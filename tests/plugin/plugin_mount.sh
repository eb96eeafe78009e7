# plugin_mount.sh - each contrib plug-in loaded through the mount serves
# tensors, and every view shows its allocations.
. "$(dirname "$0")/plugin_lib.sh"
mount_fs

expect_eq "$(current)" caching "allocator at start"

# Pass-through: every tensor is one device allocation of exactly its size.
use "$PLUGIN_DIR/passthrough.so passthrough_alloc passthrough_free"
expect_eq "$(current)" plugin1 "after loading passthrough"
head -c 3000000 /dev/urandom >"$WORK/a.bin"
truncate -s 3000000 "$MNT/tensors/device0/a"
dd if="$WORK/a.bin" of="$MNT/tensors/device0/a" bs=1M conv=notrunc status=none
cmp "$WORK/a.bin" "$MNT/tensors/device0/a" || fail "tensor a bytes differ"
truncate -s 5M "$MNT/tensors/device1/b"
expect_eq "$(value memory_allocated 0)" 3000000 "memory_allocated of device0"
expect_eq "$(value memory_reserved 0)" 3000000 "reserved = allocated for a plug-in"
expect_eq "$(value memory_allocated 1)" 5242880 "memory_allocated of device1"
expect_eq "$(stat_of allocation.all.current 0)" 1 "live allocations on device0"
expect_eq "$(stat_of segment.large_pool.current 1)" 1 "one large segment on device1"
expect_eq "$(stat_of inactive_split_bytes.all.current 0)" 0 "no split blocks"
check_stats_consistent 0
check_stats_consistent 1
grep -q "PyTorch NPU memory summary, device ID 1" "$MNT/summary/device1" ||
	fail "summary/device1 has no title"
python3 - "$MNT/snapshot/device1.json" <<'PY' || fail "snapshot of device1"
import json, sys
segs = json.load(open(sys.argv[1]))
assert len(segs) == 1, segs
assert segs[0]["total_size"] == 5242880, segs[0]
assert segs[0]["blocks"][0]["state"] == "active_allocated", segs[0]
PY
grep -q "passthrough: alloc ptr = " "$DAEMON_ERR" || fail "passthrough did not log to stderr"
expect_eq "$(ls "$MNT/allocators" | tr '\n' ' ')" \
	"caching.device0 caching.device1 plugin1.device0 plugin1.device1 " "allocators/"
expect_eq "$(awk '$1 == "allocation.all.current" { print $2 }' "$MNT/allocators/plugin1.device1")" \
	1 "allocators/plugin1.device1"
rm "$MNT/tensors/device0/a" "$MNT/tensors/device1/b"
expect_eq "$(value memory_allocated 0)" 0 "memory_allocated after rm"
expect_eq "$(value max_memory_allocated 0)" 3000000 "peak stays"

# Arena: bump allocation, the chunk is given back by empty_cache.
use "$PLUGIN_DIR/arena.so arena_alloc arena_free init=arena_init reset=arena_reset"
expect_eq "$(current)" plugin2 "after loading arena"
expect_eq "$(ls "$MNT/allocators" | grep -c plugin1)" 0 "plugin1 unloaded (no blocks left)"
free_before=$(cut -d' ' -f1 "$MNT/devices/device0/mem_info")
truncate -s 1M "$MNT/tensors/device0/x"
truncate -s 1M "$MNT/tensors/device0/y"
expect_eq "$(value memory_allocated 0)" 2097152 "two arena tensors"
rm "$MNT/tensors/device0/x" "$MNT/tensors/device0/y"
free_kept=$(cut -d' ' -f1 "$MNT/devices/device0/mem_info")
[ "$free_kept" -lt "$free_before" ] || fail "the arena chunk should stay until empty_cache"
echo 1 >"$MNT/ctl/empty_cache"
expect_eq "$(cut -d' ' -f1 "$MNT/devices/device0/mem_info")" "$free_before" \
	"empty_cache gives the arena chunk back"

# Faulty, correct variant: loads and works.
use "$PLUGIN_DIR/faulty.so faulty_alloc faulty_free"
echo hello >"$MNT/tensors/device0/h"
expect_eq "$(cat "$MNT/tensors/device0/h")" hello "faulty_alloc tensor"
rm "$MNT/tensors/device0/h"

use caching
expect_eq "$(current)" caching "back to caching"
truncate -s 1M "$MNT/tensors/device0/c"
expect_eq "$(stat_of allocation.all.current 0)" 1 "caching stats again"
rm "$MNT/tensors/device0/c"

stop_fs
expect_eq "$STATUS" 0 "exit status"
grep -q "no leaks" "$DAEMON_ERR" || fail "leaks reported at shutdown"
echo PASS
