# plugin_acl_own_descriptor.sh - a plug-in that registers its own ACL
# allocator descriptors from its init hook, as MindSpore's
# AclAllocatorRegister does (contrib/plugins/acl_pool.so): one stream per
# device, made by the plug-in; ctl/op launches operators on those streams
# by their runtime ids and the plug-in's descriptor gives the workspace;
# unloading the plug-in takes its registrations with it.
. "$(dirname "$0")/plugin_lib.sh"
mount_fs
ACL=$MNT/acl/allocators
OP=$MNT/ctl/op
# The value of column $1 in the row of runtime stream $2.
col() { awk -v c="$1" -v s="$2" '$3 == s { print $c }' "$ACL"; }
rows() { grep -c '^[0-9]' "$ACL"; }

use "$PLUGIN_DIR/acl_pool.so acl_pool_alloc acl_pool_free init=acl_pool_init"
expect_eq "$(rows)" 2 "one registration per device (2 devices)"
# Device 1's stream, which the plug-in made: the daemon has no number for it.
rs=$(awk '$1 == 1 { print $3 }' "$ACL")
[ -n "$rs" ] || fail "no registration on device 1: $(cat "$ACL")"
expect_eq "$(col 2 "$rs") $(col 6 "$rs")" "- -" "a stream and a descriptor of the plug-in's own"
expect_eq "$(col 7 "$rs")$(col 8 "$rs")$(col 9 "$rs")$(col 10 "$rs")" "yesyesyesyes" \
	"alloc, free, alloc_advise and get_addr_from_block set"

# Operators on the plug-in's stream: its descriptor gives their workspace.
echo "launch runtime_stream=$rs workspace=1MiB" >"$OP"
echo "launch runtime_stream=$rs workspace=3MiB device=1" >"$OP"
expect_eq "$(col 11 "$rs") $(col 13 "$rs") $(col 14 "$rs")" "2 2 4194304" \
	"two alloc calls, 4 MiB outstanding"
expect_eq "$(awk '$1 == "fallback_workspace_allocations" { print $2 }' "$ACL")" 0 \
	"nothing from the allocator in use"
expect_eq "$(stat_of allocation.all.allocated 1)" 0 "no tensor allocation on device 1"
echo "sync runtime_stream=$rs" >"$OP"
expect_eq "$(col 12 "$rs") $(col 13 "$rs")" "2 0" "both blocks freed through the descriptor"

# Refusals name the reason and change nothing.
expect_fail "echo 'launch runtime_stream=999 workspace=1MiB' >'$OP'" "No such file"
grep -q "last_error: no ACL allocator is registered on runtime stream 999" "$OP" ||
	fail "no reason in: $(grep last_error "$OP")"
expect_fail "echo 'launch runtime_stream=$rs workspace=1MiB device=0' >'$OP'" "Invalid argument"
grep -q "last_error: runtime stream $rs is a stream of device 1, not 0" "$OP" ||
	fail "no device mismatch in: $(grep last_error "$OP")"
expect_fail "echo 'launch stream=1 runtime_stream=$rs workspace=1MiB' >'$OP'" "Invalid argument"
expect_eq "$(col 11 "$rs")" 2 "nothing launched by a refusal"

# Workspace outstanding keeps the plug-in loaded after a swap; the sync
# frees it and the plug-in goes, its destructor unregistering its streams.
echo "launch runtime_stream=$rs workspace=2MiB" >"$OP"
echo caching >"$CTL"
grep -q "plugin1.*unloaded" "$MNT/log" && fail "unloaded with workspace outstanding"
expect_eq "$(col 13 "$rs")" 1 "the block is still out"
echo "sync runtime_stream=$rs" >"$OP"
grep -q "allocator plugin1 (.*acl_pool.so) unloaded" "$MNT/log" ||
	fail "not unloaded once its workspace came back: $(tail -5 "$MNT/log")"
expect_eq "$(rows)" 0 "the plug-in took its registrations with it"
grep -q "acl: ACL allocators on runtime streams [0-9]* $rs unregistered: their functions are plugin1's code, which is being unloaded" "$MNT/log" ||
	fail "no unregistration in the log: $(grep acl: "$MNT/log")"

stop_fs
expect_eq "$STATUS" 0 "exit status"
grep -q "no leaks" "$DAEMON_ERR" || fail "leaks reported at shutdown"
echo PASS
