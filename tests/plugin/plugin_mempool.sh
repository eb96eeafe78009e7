#!/usr/bin/env bash
# plugin_mempool.sh - torch.npu.MemPool(allocator=...): a plug-in loaded
# beside the caching allocator ("load" in ctl/allocator, as
# NPUPluggableAllocator(...) without change_current_allocator) gives a
# MemPool its segments and takes them back (test_npu_allocator.py's
# test_custom_allocator_alloc_free_paired). The plug-in stays loaded while
# the pool lives; a crash in it costs only the allocation that asked.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0"
. "$(dirname "$0")/plugin_lib.sh"
mount_fs

M=$MNT/ctl/mempool
T=$MNT/tensors/device0
last_error() { sed -n 's/^last_error: //p' "$1"; }
mempool() { echo "$1" >"$M" || fail "mempool '$1': $(last_error "$M")"; }
# Field $2 of allocator $1's block in ctl/allocator.
alloc_field() { awk -v a="$1" -v k="$2" '/^[a-z]/ { cur = $2 } cur == a && $1 == k { print $2 }' "$CTL"; }
state_of() { awk -v a="$1" '/^[a-z]/ && $2 == a { print $1 }' "$CTL"; }
mempool_col() { awk -v m="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i }
	NR > 1 && $1 == m { print $col[c] }' "$M"; }
pool_col() { awk -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i }
	NR == 2 { print $col[c] }' "$MNT/pools/device0"; }

spec="$PLUGIN_DIR/passthrough.so passthrough_alloc_silent passthrough_free_silent"
echo "load $spec" >"$CTL" || fail "load: $(last_error "$CTL")"
expect_eq "$(current)" caching "current allocator after load"
expect_eq "$(state_of plugin1)" loaded "plugin1's state after load"

# Refusals change nothing.
before=$(grep -v last_error "$M")
expect_fail "echo 'create n allocator=plugin9' > '$M'" "No such file or directory"
expect_eq "$(last_error "$M")" "no loaded plug-in plugin9 (ctl/allocator lists them)" "unknown allocator"
expect_fail "echo 'create n allocator=caching' > '$M'" "Invalid argument"
expect_eq "$(last_error "$M")" "allocator=caching: the caching allocator is a MemPool's default; name a loaded plug-in (pluginK)" "allocator=caching"
expect_fail "echo 'create n allocator=' > '$M'" "Invalid argument"
expect_eq "$(grep -v last_error "$M")" "$before" "ctl/mempool after refused creates"
expect_fail "echo 'unload plugin9' > '$CTL'" "No such file or directory"
expect_fail "echo 'unload caching' > '$CTL'" "Invalid argument"
expect_fail "echo 'unload' > '$CTL'" "Invalid argument"
expect_eq "$(last_error "$CTL")" "unload takes one name, pluginK" "unload without a name"

mempool "create m allocator=plugin1"
expect_eq "$(mempool_col m allocator)" plugin1 "ctl/mempool's allocator column"
expect_eq "$(pool_col allocator)" plugin1 "pools/device0's allocator column"
expect_eq "$(alloc_field plugin1 mempools)" 1 "plugin1's MemPools"
mempool "begin m stream=1"

# A 4 MiB tensor on the routed stream: one 20 MiB segment, from plugin1.
head -c 4194304 /dev/urandom >"$WORK/bytes"
reserved0=$(stat_of reserved_bytes.all.current)
truncate -s 4194304 "$T/stream1/x"
dd if="$WORK/bytes" of="$T/stream1/x" bs=1M conv=notrunc status=none || fail "write x"
expect_eq "$(alloc_field plugin1 mempool_segments)" 1 "plugin1's segments lent"
expect_eq "$(alloc_field plugin1 mempool_bytes)" 20971520 "plugin1's bytes lent"
expect_eq "$(alloc_field plugin1 live_blocks)" 0 "plugin1's own blocks"
expect_eq "$(stat_of reserved_bytes.all.current)" $((reserved0 + 20971520)) "reserved with the pool's segment"
expect_eq "$(pool_col segments)" 1 "the pool's segments"
cmp "$WORK/bytes" "$T/stream1/x" || fail "the pool's tensor lost bytes"

# The MemPool's exit and destructor give the segment back to plugin1.
mempool "end m"
rm "$T/stream1/x"
mempool "release m"
expect_eq "$(state_of plugin1)" loaded "plugin1's state after the pool went"
expect_eq "$(alloc_field plugin1 mempools)" 0 "plugin1's MemPools after release"
expect_eq "$(alloc_field plugin1 mempool_segments)" 0 "plugin1's segments after release"
expect_eq "$(alloc_field plugin1 mempool_bytes)" 0 "plugin1's bytes after release"
expect_eq "$(stat_of reserved_bytes.all.current)" "$reserved0" "reserved after the pool went"

# Unloaded while a pool holds its segment: it stays until the pool goes.
mempool "create m2 allocator=plugin1"
mempool "begin m2 stream=1"
truncate -s 4194304 "$T/stream1/y"
echo "unload plugin1" >"$CTL" || fail "unload: $(last_error "$CTL")"
expect_eq "$(state_of plugin1)" retired "plugin1's state after unload, pool alive"
expect_eq "$(alloc_field plugin1 mempool_segments)" 1 "plugin1's segments after unload"
mempool "end m2"
rm "$T/stream1/y"
mempool "release m2"
expect_eq "$(state_of plugin1)" "" "plugin1 after the pool went"
grep -q "plugin1.*unloaded" "$MNT/log" || fail "the log does not say plugin1 was unloaded"

# A crash in the pool's allocator: the allocation fails, nothing else.
cp "$WORK/bytes" "$T/kept"
echo "load $PLUGIN_DIR/faulty.so faulty_segv_alloc faulty_free" >"$CTL" ||
	fail "load faulty: $(last_error "$CTL")"
mempool "create c allocator=plugin2"
mempool "begin c stream=2"
expect_fail "truncate -s 4096 '$T/stream2/crash'" "Bad address"
grep -q 'faulted in faulty_segv_alloc: signal 11 (Segmentation fault) at (nil)' "$MNT/log" ||
	fail "log does not name the function, signal and address: $(tail -3 "$MNT/log")"
expect_eq "$(current)" caching "current allocator after the crash"
cmp "$WORK/bytes" "$T/kept" || fail "another tensor lost bytes"
expect_fail "echo 'create d allocator=plugin2' > '$M'" "Invalid argument"
expect_eq "$(last_error "$M")" "plugin2 faulted and was retired: load it again" "a faulted allocator"
mempool "end c"
mempool "release c"
echo "unload plugin2" >"$CTL" || fail "unload plugin2: $(last_error "$CTL")"
rm "$T/kept"
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
grep -q 'invariant check: ok' "$DAEMON_ERR" || fail "no invariant check: $(tail -3 "$DAEMON_ERR")"
grep -q 'no leaks' "$DAEMON_ERR" || fail "no leak report: $(tail -3 "$DAEMON_ERR")"
