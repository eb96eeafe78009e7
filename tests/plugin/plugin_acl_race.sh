# plugin_acl_race.sh - ctl/acl_allocator unregistering a stream's allocator
# while operators on that stream draw workspace through it: every launch
# either goes through the allocator or falls back, nothing is lost, and
# (under the sanitizers' builds) no adapter is read after it is freed.
. "$(dirname "$0")/plugin_lib.sh"
mount_fs
ACL=$MNT/ctl/acl_allocator
OP=$MNT/ctl/op

(for _ in $(seq 300); do
	echo "register caching stream=1" >"$ACL"
	echo "unregister stream=1" >"$ACL"
done) &
SWAPPER=$!
for _ in $(seq 300); do
	echo "launch stream=1 workspace=4096" >"$OP" || fail "a launch failed"
done
wait "$SWAPPER" || fail "a register or unregister failed"
echo "sync stream=1" >"$OP"

# Through the adapter or as a fallback, each launch is one caching block.
expect_eq "$(stat_of allocation.all.allocated)" 300 "workspace allocations"
expect_eq "$(value memory_allocated)" 0 "every workspace block is back"
expect_eq "$(grep -c '^[0-9]' "$MNT/acl/allocators")" 0 "nothing registered"

stop_fs
expect_eq "$STATUS" 0 "exit status"
grep -q "no leaks" "$DAEMON_ERR" || fail "leaks reported at shutdown"
echo PASS
