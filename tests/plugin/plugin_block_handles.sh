# plugin_block_handles.sh - a plug-in calling torch_npu's block handles
# (MallocBlock, FreeBlock, GetBlockPtr, GetBlockSize) inside the daemon,
# as torchair's NpuAllocator does: npumemfs exports them, the plug-in
# (contrib/plugins/acl_blocks.so, linked without them) resolves them at
# load, and the workspace it registers for its stream comes from the
# caching allocator even while the plug-in is the current allocator.
. "$(dirname "$0")/plugin_lib.sh"
for sym in MallocBlock FreeBlock GetBlockPtr GetBlockSize; do
	nm -D --defined-only "$NPUMEMFS" | grep -qw "$sym" || fail "npumemfs does not export $sym"
done
nm -D --defined-only "$NPUMEMFS" | grep -qw npa_malloc && fail "npumemfs exports its internals"
nm -D --undefined-only "$PLUGIN_DIR/acl_blocks.so" | grep -qw MallocBlock ||
	fail "acl_blocks.so does not take MallocBlock from the program that loads it"
mount_fs
ACL=$MNT/acl/allocators
OP=$MNT/ctl/op
caching() { awk -v k="$1" '$1 == k { print $2 }' "$MNT/allocators/caching.device0"; }

use "$PLUGIN_DIR/acl_blocks.so acl_blocks_alloc acl_blocks_free init=acl_blocks_init"
rs=$(awk '$1 == 0 { print $3 }' "$ACL")
[ -n "$rs" ] || fail "no registration on device 0: $(cat "$ACL")"

echo "launch runtime_stream=$rs workspace=1MiB" >"$OP"
# 1 MiB + 32 rounded to 512, from the caching allocator, held by the operator.
expect_eq "$(caching allocated_bytes.all.current)" 1049088 "a caching block outstanding"
expect_eq "$(awk -v s="$rs" '$3 == s { print $11, $13 }' "$ACL")" "1 1" "one alloc call, outstanding"
expect_eq "$(current)" plugin1 "the plug-in stays the current allocator"
grep -q "acl_blocks: device 0: a block for 1048576 bytes, GetBlockSize 1049088" "$DAEMON_ERR" ||
	fail "GetBlockSize not seen by the plug-in: $(cat "$DAEMON_ERR")"
echo "sync runtime_stream=$rs" >"$OP"
expect_eq "$(caching allocated_bytes.all.current)" 0 "FreeBlock gave it back"
expect_eq "$(caching allocation.all.freed)" 1 "one block freed"

echo caching >"$CTL"
grep -q "acl: ACL allocators on runtime streams .* unregistered: their functions are plugin1's code" \
	"$MNT/log" || fail "its registrations outlived it: $(grep acl: "$MNT/log")"
stop_fs
expect_eq "$STATUS" 0 "exit status"
grep -q "no leaks" "$DAEMON_ERR" || fail "leaks reported at shutdown"
echo PASS
