#!/usr/bin/env bash
# MemPools with a plug-in current. torch_npu v2.6.0's MemPool() only takes
# an id (MemPool::MemPool asks no allocator), so with flavor npu `create M`
# makes no pool and calls no hook; use_mem_pool's calls go to the current
# allocator (NPUCachingAllocator::beginAllocateToPool -> get()), so
# `begin M` calls the plug-in's begin_allocate_to_pool with the device and
# the id, the stream's tensors come from the plug-in, and `end M` calls
# end_allocate_to_pool then release_pool; pools/device0 and ctl/mempool
# name the plug-in while it serves the pool. A hook missing is warned of
# once, in torch_npu's words, and nothing is called. Current PyTorch's
# MemPool() calls createOrIncrefPool on the current allocator, which
# CUDAPluggableAllocator does not support: flavor cuda refuses `create`.
. "$(dirname "$0")/plugin_lib.sh"
export PASSTHROUGH_POOL_LOG=$WORK/pools.log
: >"$PASSTHROUGH_POOL_LOG"
INI_CACHED=$(cat "$INI")
mount_fs

M=$MNT/ctl/mempool
T=$MNT/tensors/device0
last_error() { sed -n 's/^last_error: //p' "$1"; }
mempool() { echo "$1" >"$M" || fail "mempool '$1': $(last_error "$M")"; }
hooks_called() { cat "$PASSTHROUGH_POOL_LOG"; }
# Column $2 of MemPool $1 in ctl/mempool; pool $1's uses, routing and allocator.
mempool_col() { awk -v m="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i }
	NR > 1 && $1 == m { print $col[c] }' "$M"; }
pool_rows() { awk -v p="$1" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i }
	NR > 1 && $1 == p { print $col["use_count"], $col["routing"], $col["allocator"] }' \
	"$MNT/pools/device0"; }
spec="$PLUGIN_DIR/passthrough.so passthrough_alloc_silent passthrough_free_silent"
hooks="begin_allocate_to_pool=passthrough_begin_pool end_allocate_to_pool=passthrough_end_pool"
hooks="$hooks release_pool=passthrough_release_pool"

use "$spec $hooks"
mempool "create m"
expect_eq "$(hooks_called)" "" "MemPool() calls no hook"
expect_eq "$(mempool_col m pool) $(mempool_col m use_count) $(mempool_col m allocator)" \
	"0_1 0 -" "a MemPool that is only an id"
expect_eq "$(pool_rows 0_1)" "" "no pool behind the id"

mempool "begin m stream=1"
expect_eq "$(hooks_called)" "begin_allocate_to_pool device=0 pool=0,1" \
	"use_mem_pool's entry: the plug-in's begin hook with the MemPool's id"
expect_eq "$(pool_rows 0_1)" "1 yes plugin1" "pools/device0: uses, routing, the plug-in"
expect_eq "$(mempool_col m allocator) $(mempool_col m routing)" "plugin1 stream1" \
	"ctl/mempool names the plug-in"
truncate -s 4096 "$T/stream1/x" || fail "a tensor in the MemPool"
expect_eq "$(awk '$1 == "live_blocks" { print $2; exit }' "$CTL")" 1 \
	"the routed stream's tensor comes from the plug-in"
expect_fail "echo '$spec' > '$CTL'" "Device or resource busy"
mempool "end m"
expect_eq "$(sed -n 2,3p "$PASSTHROUGH_POOL_LOG")" \
	"end_allocate_to_pool device=0 pool=0,1
release_pool device=0 pool=0,1" "use_mem_pool's exit: end, then release"
expect_eq "$(pool_rows 0_1)" "" "the released pool is forgotten"
rm "$T/stream1/x"
mempool "release m"
expect_eq "$(wc -l <"$PASSTHROUGH_POOL_LOG")" 3 "the destructor calls nothing"
expect_eq "$(mempool_col m pool)" "" "the MemPool is gone"

# Options that need the caching allocator's pool change nothing.
before=$(grep -v last_error "$M")
expect_fail "echo 'create o use_on_oom' > '$M'" "Invalid argument"
expect_contains "$(last_error "$M")" "with a plug-in current a MemPool is only an id" \
	"use_on_oom with a plug-in current"
expect_eq "$(grep -v last_error "$M")" "$before" "ctl/mempool after a refused create"

# A plug-in without the hooks: called for nothing, each warned of once.
use "$spec"
mempool "create n"
mempool "begin n stream=1"
mempool "end n"
mempool "begin n stream=1"
mempool "end n"
for call in beginAllocateToPool endAllocateToPool releasePool; do
	expect_eq "$(grep -c "allocator plugin2: UserWarning: NPUPluggableAllocator does not yet support $call. If you need it, please file an issue describing your use case." "$MNT/log")" \
		1 "one warning for $call"
done
expect_eq "$(wc -l <"$PASSTHROUGH_POOL_LOG")" 3 "no hook, no call"
mempool "release n"
use caching
stop_fs
expect_eq "$STATUS" 0 "exit status (npu)"

printf '%s\n' "$INI_CACHED" | sed 's/^\[device\]$/[device]\nflavor = cuda/' >"$INI"
mount_fs
use "$spec $hooks"
expect_fail "echo 'create c' > '$M'" "Operation not supported"
expect_eq "$(last_error "$M")" \
	"pluggable does not yet support createOrIncrefPool. If you need it, please file an issue describing your use case." \
	"cuda: MemPool() with a plug-in current"
expect_eq "$(mempool_col c pool)" "" "no MemPool made"
expect_eq "$(wc -l <"$PASSTHROUGH_POOL_LOG")" 3 "no hook called"
use caching
stop_fs
expect_eq "$STATUS" 0 "exit status (cuda)"
echo PASS
