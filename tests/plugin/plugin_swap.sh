# plugin_swap.sh - swapping allocators with live tensors: every byte stays,
# every block is freed by the allocator that made it, and a retired
# plug-in is unloaded with its last block.
. "$(dirname "$0")/plugin_lib.sh"
mount_fs

T=$MNT/tensors/device0
for n in a b c d; do head -c 2500000 /dev/urandom >"$WORK/$n.bin"; done

cp "$WORK/a.bin" "$T/a"                                   # caching
use "$PLUGIN_DIR/passthrough.so passthrough_alloc_silent passthrough_free_silent"
cp "$WORK/b.bin" "$T/b"                                   # plugin1
use "$PLUGIN_DIR/arena.so arena_alloc arena_free reset=arena_reset"
cp "$WORK/c.bin" "$T/c"                                   # plugin2
use caching
cp "$WORK/d.bin" "$T/d"                                   # caching

text=$(cat "$CTL")
expect_contains "$text" "current caching" "ctl/allocator"
expect_contains "$text" "retired plugin1" "ctl/allocator"
expect_contains "$text" "retired plugin2" "ctl/allocator"
for n in a b c d; do cmp "$WORK/$n.bin" "$T/$n" || fail "tensor $n changed by the swaps"; done

# A resize after the swap: the new block comes from caching, the old one
# goes back to plugin1, which then holds nothing and is unloaded.
truncate -s 3000000 "$T/b"
cmp -n 2500000 "$WORK/b.bin" "$T/b" || fail "resize lost bytes of b"
expect_eq "$(grep -c "plugin1" "$CTL")" 0 "plugin1 unloaded after its last block moved"
[ ! -e "$MNT/allocators/plugin1.device0" ] || fail "allocators/ still lists plugin1"
grep -qE "allocator plugin1 \(/.*/passthrough\.so\) unloaded: it holds no blocks any more$" "$MNT/log" \
	|| fail "the log does not say plugin1 was unloaded: $(tail -3 "$MNT/log")"

rm "$T/c"
expect_eq "$(grep -c "plugin2" "$CTL")" 0 "plugin2 unloaded after rm c"
rm "$T/a" "$T/b" "$T/d"
expect_eq "$(value memory_allocated 0)" 0 "everything freed"

# Swapping from one plug-in to another and back with live tensors.
use "$PLUGIN_DIR/passthrough.so passthrough_alloc_silent passthrough_free_silent"
cp "$WORK/a.bin" "$T/a"
use "$PLUGIN_DIR/faulty.so faulty_alloc faulty_free"
cp "$WORK/b.bin" "$T/b"
use "$PLUGIN_DIR/passthrough.so passthrough_alloc_silent passthrough_free_silent"
cmp "$WORK/a.bin" "$T/a" || fail "a after plug-in to plug-in swaps"
cmp "$WORK/b.bin" "$T/b" || fail "b after plug-in to plug-in swaps"
rm "$T/a" "$T/b"
expect_eq "$(grep -c retired "$CTL")" 0 "no retired allocator left"

stop_fs
expect_eq "$STATUS" 0 "exit status"
grep -q "no leaks" "$DAEMON_ERR" || fail "leaks reported at shutdown"
echo PASS
