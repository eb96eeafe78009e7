#!/usr/bin/env bash
# A graph captured while a plug-in is current is the plug-in's, as NPUGraph
# calls NPUPluggableAllocator upstream: capture_begin asks its
# begin_allocate_to_pool hook for the graph's pool (device and mempool id),
# the capture's tensors come from its alloc, capture_end calls
# end_allocate_to_pool and reset release_pool, each on the plug-in that
# began the pool even after a switch; pools/deviceN names it. A plug-in
# without the hooks captures all the same (upstream calls nothing then),
# warned of in torch_npu's words. MemPools: plugin_mempool_current.sh.
# While a capture or a MemPool routes allocations, a switch to a plug-in is
# refused.
. "$(dirname "$0")/plugin_lib.sh"
export PASSTHROUGH_POOL_LOG=$WORK/pools.log
: >"$PASSTHROUGH_POOL_LOG"
mount_fs

G=$MNT/ctl/graph
M=$MNT/ctl/mempool
A=$MNT/ctl/allocator
last_error() { sed -n 's/^last_error: //p' "$1"; }
hooks="begin_allocate_to_pool=passthrough_begin_pool end_allocate_to_pool=passthrough_end_pool"
hooks="$hooks release_pool=passthrough_release_pool"
spec="$PLUGIN_DIR/passthrough.so passthrough_alloc_silent passthrough_free_silent"

echo "create g" >"$G" || fail "create a graph"
echo "create m" >"$M" || fail "create a MemPool"
use "$spec $hooks"
echo "capture_begin g stream=1" >"$G" || fail "capture with a plug-in: $(last_error "$G")"
expect_eq "$(cat "$PASSTHROUGH_POOL_LOG")" "begin_allocate_to_pool device=0 pool=1,0" \
	"the plug-in's begin hook, with the graph's own pool"
expect_eq "$(awk '$1 == "1_0" { print $2, $11, $12 }' "$MNT/pools/device0")" "1 yes plugin1" \
	"pools/device0 names the plug-in that routes the pool"
head -c 4096 /dev/zero >"$MNT/tensors/device0/stream1/x" || fail "a tensor in the capture"
expect_eq "$(awk '$1 == "live_blocks" { print $2; exit }' "$A")" 1 \
	"the capture's tensor comes from the plug-in"
expect_fail "echo '$spec' > '$A'" "Device or resource busy"
expect_contains "$(last_error "$A")" "the current plug-in routes allocations to a private pool" \
	"switch during the plug-in's capture"
echo "capture_end g" >"$G" || fail "capture_end: $(last_error "$G")"
expect_eq "$(sed -n 2p "$PASSTHROUGH_POOL_LOG")" "end_allocate_to_pool device=0 pool=1,0" \
	"the plug-in's end hook"
rm "$MNT/tensors/device0/stream1/x"

use caching
echo "reset g" >"$G" || fail "reset: $(last_error "$G")"
expect_eq "$(sed -n 3p "$PASSTHROUGH_POOL_LOG")" "release_pool device=0 pool=1,0" \
	"release_pool goes to the plug-in that began the pool, not to the current one"
expect_eq "$(awk '$1 == "1_0"' "$MNT/pools/device0")" "" "the released pool is forgotten"

use "$spec"
echo "capture_begin g stream=1" >"$G" || fail "capture without pool hooks: $(last_error "$G")"
echo "capture_end g" >"$G" || fail "capture_end without pool hooks: $(last_error "$G")"
echo "reset g" >"$G" || fail "reset without pool hooks: $(last_error "$G")"
expect_eq "$(wc -l <"$PASSTHROUGH_POOL_LOG")" 3 "no hook, no call"

grep -q "allocator plugin2: UserWarning: NPUPluggableAllocator does not yet support beginAllocateToPool. If you need it, please file an issue describing your use case." "$MNT/log" ||
	fail "no torch_npu warning for the missing begin hook"

use caching
routing="device0 routes allocations to a private pool (a graph capture or a MemPool in use); switch once it ends"
echo "capture_begin g stream=1" >"$G" || fail "capture with caching: $(last_error "$G")"
expect_fail "echo '$spec' > '$A'" "Device or resource busy"
expect_eq "$(last_error "$A")" "$routing" "switch during a capture"
echo "capture_end g" >"$G" || fail "capture_end: $(last_error "$G")"
echo "begin m stream=2" >"$M" || fail "routing with caching: $(last_error "$M")"
expect_fail "echo '$spec' > '$A'" "Device or resource busy"
expect_eq "$(last_error "$A")" "$routing" "switch while a MemPool routes"
echo "end m" >"$M" || fail "end: $(last_error "$M")"
use "$spec"
use caching
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
