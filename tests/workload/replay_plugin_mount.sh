#!/usr/bin/env bash
# replay_plugin_mount.sh - a replay started through workload/replay
# allocates through the plug-in current at each allocation, never through
# the caching allocator behind it, and its blocks stay the plug-in's
# across a swap back to caching.
. "$(dirname "$0")/../plugin/plugin_lib.sh"

# stat KEY FILE: a value of an allocators/ or stats/ file.
stat_in() { awk -v k="$1" '$1 == k { print $2 }' "$MNT/$2"; }

mount_fs
use "$PLUGIN_DIR/passthrough.so passthrough_alloc_silent passthrough_free_silent"

printf 'alloc a 3MiB\nalloc b 1MiB device=1\nalloc c 2000 stream=1\nfree c\n' \
	>"$WORK/plugin.trace"
echo "$WORK/plugin.trace" >"$MNT/workload/replay" || fail "starting a replay"
wait_state done
grep -qx 'allocs: 3' "$MNT/workload/replay" || fail "$(cat "$MNT/workload/replay")"

expect_eq "$(stat_in allocation.all.allocated allocators/plugin1.device0)" 2 \
	"allocations the plug-in made on device0"
expect_eq "$(stat_in allocation.all.current allocators/plugin1.device0)" 1 \
	"a is live in the plug-in"
expect_eq "$(stat_in allocated_bytes.all.current allocators/plugin1.device0)" 3145728 \
	"a's 3 MiB on device0"
expect_eq "$(stat_in allocation.all.current allocators/plugin1.device1)" 1 \
	"b is live in the plug-in on device1"
for d in 0 1; do
	expect_eq "$(stat_in allocation.all.allocated allocators/caching.device$d)" 0 \
		"caching allocator allocations on device$d"
	expect_eq "$(stat_in segment.all.allocated allocators/caching.device$d)" 0 \
		"caching allocator segments on device$d"
done
expect_eq "$(stat_in allocation.all.current stats/device0)" 1 "stats/device0 is the plug-in's"

# Back to caching: the replay's blocks keep the plug-in loaded.
use caching
expect_eq "$(ls "$MNT/allocators" | grep -c '^plugin1\.')" 2 \
	"plugin1 stays while the replay holds its blocks"

# A new replay frees what the last one held (through plugin1, which then
# unloads) and allocates from the caching allocator.
printf 'alloc x 1MiB\n' >"$WORK/caching.trace"
echo "$WORK/caching.trace" >"$MNT/workload/replay" || fail "second replay"
wait_state done
expect_eq "$(ls "$MNT/allocators" | grep -c '^plugin1\.')" 0 \
	"plugin1 unloaded once its last block was freed"
expect_eq "$(stat_in allocation.all.allocated allocators/caching.device0)" 1 \
	"the second replay allocates from the caching allocator"
expect_eq "$(stat_in allocation.all.current stats/device0)" 1 "x is live"
exit 0
