# plugin_torch_npu_ext.sh - Ascend/pytorch's pluggable-allocator test
# extension (torch_npu_extension.cpp: its functions and hook bodies as they
# are) built with c++ the way contrib/plugins/README.md section 2 builds a
# plug-in, then torch_npu's test_pluggable_allocator_extensions.py by hand:
# the allocator serves tensors, get_device_stats's numbers are memory_stats
# (num_alloc_retries 0), reset_peak_status runs (max_memory_allocated 0),
# and without the hooks the log has torch_npu's warnings, verbatim.
. "$(dirname "$0")/plugin_lib.sh"
BUILD=${BUILD_DIR:?BUILD_DIR must name the build tree}
command -v c++ >/dev/null || skip "no C++ compiler (c++)"

export PKG_CONFIG_PATH=$BUILD/pkgconfig
c++ -shared -fPIC "$(dirname "$0")/torch_npu_extension.cpp" \
	$(pkg-config --cflags --libs npusim) -o "$WORK/ext.so" 2>"$WORK/build.log" ||
	fail "the extension does not build: $(cat "$WORK/build.log")"
install -m 0755 "$WORK/ext.so" "$PRIVATE/"
EXT=$PRIVATE/ext.so

mount_fs >"$WORK/daemon.out"

# test_pluggable_allocator: tensors come from my_malloc (which logs them).
use "$EXT my_malloc my_free get_device_stats=my_get_device_stats reset_peak_status=my_reset_peak_status"
truncate -s 40 "$MNT/tensors/device0/npu_tensor"     # torch.zeros(10), float32
head -c 40 /dev/zero | cmp - "$MNT/tensors/device0/npu_tensor" || fail "zeros read back"
expect_eq "$(awk '$1 == "live_blocks" { print $2; exit }' "$CTL")" 1 "one block through my_malloc"

# test_set_get_device_stats_fn: memory_stats is the hook's DeviceStats,
# zeros, though a tensor is live (the wrapper would count 40 bytes).
expect_eq "$(stat_of num_alloc_retries)" 0 "num_alloc_retries from the hook"
expect_eq "$(stat_of allocated_bytes.all.current)" 0 "allocated_bytes from the hook"
expect_eq "$(awk '$1 == "allocation.all.current" { print $2 }' "$MNT/allocators/plugin1.device0")" \
	0 "allocators/plugin1.device0 from the hook"
grep -q "^allocation.all.current 0$" "$MNT/stats/device0" || fail "stats/device0"

# test_set_reset_peak_status_fn: the hook runs, max_memory_allocated is 0.
echo 1 >"$MNT/ctl/reset_peak_stats"
expect_eq "$(value max_memory_allocated 0)" 0 "max_memory_allocated after reset_peak_stats"
rm "$MNT/tensors/device0/npu_tensor"
grep -q "UserWarning" "$MNT/log" && fail "warned with both hooks given: $(grep UserWarning "$MNT/log")"

# The same allocator without the hooks: torch_npu's warnings, verbatim, once.
use "$EXT my_malloc my_free"
truncate -s 40 "$MNT/tensors/device0/t"
expect_eq "$(stat_of allocated_bytes.all.current)" 40 "the wrapper's bookkeeping without the hook"
cat "$MNT/stats/device0" >/dev/null
echo 1 >"$MNT/ctl/reset_peak_stats"
rm "$MNT/tensors/device0/t"
expect_eq "$(grep -c "allocator plugin2: UserWarning: get_device_stats_fn_ is not define, please set by set_get_device_stats_fn$" "$MNT/log")" \
	1 "get_device_stats warning, once"
expect_eq "$(grep -c "allocator plugin2: UserWarning: reset_peak_status_fn_ is not define, please set by set_reset_peak_status_fn$" "$MNT/log")" \
	1 "reset_peak_status warning, once"

stop_fs
expect_eq "$STATUS" 0 "exit status"
grep -q "alloc ptr = 0x[0-9a-f]*, size = 40" "$WORK/daemon.out" || fail "my_malloc did not run"
grep -q "^resetPeakStatus success!$" "$WORK/daemon.out" || fail "my_reset_peak_status did not run"
echo PASS
