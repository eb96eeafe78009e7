# plugin_acl_allocator.sh - ACL allocators on streams through the mount:
# ctl/op's workspace from the caching allocator without a registration,
# through a registered one with it, refused writes naming the reason
# and changing nothing, and a swap with workspace outstanding.
. "$(dirname "$0")/plugin_lib.sh"
mount_fs
ACL=$MNT/ctl/acl_allocator
OP=$MNT/ctl/op
rows() { grep -c '^[0-9]' "$MNT/acl/allocators"; }
col() { awk -v c="$1" 'NR == 2 { print $c }' "$MNT/acl/allocators"; }

# No registration: the workspace is a caching-allocator block, freed at once.
echo "launch stream=1 workspace=4096" >"$OP"
expect_eq "$(awk '$1 == "fallback_workspace_allocations" { print $2 }' "$MNT/acl/allocators")" \
	1 "fallback allocations"
expect_eq "$(stat_of allocation.all.allocated)" 1 "one workspace allocation"
expect_eq "$(value memory_allocated)" 0 "workspace freed after the launch"

# The caching allocator registered on stream 1, as torchair registers it.
echo "register caching stream=1" >"$ACL"
expect_eq "$(rows)" 1 "one registration"
expect_eq "$(col 1) $(col 2) $(col 6)" "0 1 caching" "device, stream, allocator"
expect_eq "$(col 7)$(col 8)$(col 9)$(col 10)" "yesyesyesyes" "functions set"
echo "launch stream=1 workspace=3MiB" >"$OP"
expect_eq "$(value memory_allocated)" 3146240 "3 MiB + 32, rounded, outstanding"
expect_eq "$(col 11) $(col 13) $(col 14)" "1 1 3145728" "alloc_calls, outstanding"

# Refused writes name the reason and change nothing.
expect_fail "echo 'register plugin7 stream=1' >'$ACL'" "No such file"
expect_fail "echo 'register caching' >'$ACL'" "Invalid argument"
expect_fail "echo 'launch stream=1' >'$OP'" "Invalid argument"
expect_fail "echo 'launch stream=1 workspace=lots' >'$OP'" "Invalid argument"
expect_fail "echo 'launch stream=1 workspace=1M' >'$OP'" "Invalid argument"
grep -q "last_error: 'workspace=1M': use 1MiB (binary) or bytes" "$OP" ||
	fail "no IEC spelling in: $(grep last_error "$OP")"
expect_eq "$(rows) $(col 6) $(col 11)" "1 caching 1" "nothing changed"

# Swap to a plug-in with the caching block outstanding: nothing is lost.
use "$PLUGIN_DIR/passthrough.so passthrough_alloc_silent passthrough_free_silent"
echo "register plugin1 stream=1" >"$ACL"
expect_eq "$(col 6)" plugin1 "the last registration wins"
echo "launch stream=1 workspace=1MiB" >"$OP"
expect_eq "$(awk '$1 == "allocation.all.current" { print $2 }' "$MNT/allocators/plugin1.device0")" \
	1 "plugin1 holds the new workspace"
expect_eq "$(col 11) $(col 13)" "2 2" "two alloc calls on the stream, both outstanding"
echo "sync stream=1" >"$OP"
expect_eq "$(col 12) $(col 13) $(col 14)" "2 0 0" "both freed through their own allocators"
expect_eq "$(awk '$1 == "allocated_bytes.all.current" { print $2 }' "$MNT/allocators/caching.device0")" \
	0 "the caching block is back"
echo "unregister stream=1" >"$ACL"
expect_eq "$(rows)" 0 "unregistered"
echo "unregister stream=1" >"$ACL" || fail "a second unregister succeeds, as CANN's"

stop_fs
expect_eq "$STATUS" 0 "exit status"
grep -q "no leaks" "$DAEMON_ERR" || fail "leaks reported at shutdown"
echo PASS
