#!/usr/bin/env bash
# no_caching_test.sh CASE - PYTORCH_NO_NPU_MEMORY_CACHING and the ini's
# no_memory_caching: a tensor is its own device allocation, given back at
# once, and memory_stats() stay 0 as torch_npu's uncached path leaves
# them. The variable, when set, decides over the ini, read as torch_npu
# reads it (strtol, non-zero is on). One behaviour per CASE.
case_name=$1
case $case_name in
env_1_gives_a_freed_tensor_back_to_the_device_with_stats_at_0)
	export PYTORCH_NO_NPU_MEMORY_CACHING=1 ;;
ini_true_gives_a_freed_tensor_back_to_the_device_with_stats_at_0)
	unset PYTORCH_NO_NPU_MEMORY_CACHING
	INI_TEXT='[allocator]
no_memory_caching = true' ;;
env_0_turns_off_the_ini_s_true)
	export PYTORCH_NO_NPU_MEMORY_CACHING=0
	INI_TEXT='[allocator]
no_memory_caching = true' ;;
env_2_is_on_as_torch_npu_reads_it)
	export PYTORCH_NO_NPU_MEMORY_CACHING=2 ;;
esac
. "$(dirname "$0")/lib.sh"
mount_fs
T=$MNT/tensors/device0
stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$MNT/stats/device0"; }
free_bytes() { cut -d' ' -f1 "$MNT/devices/device0/mem_info"; }
setting() { sed -n 's/^no_memory_caching = //p' "$MNT/config"; }

uncached_round_trip() {
	local free
	free=$(free_bytes)
	truncate -s 1M "$T/a" || fail "1 MiB tensor refused"
	expect_eq "$(stat_of allocated_bytes.all.current)" 0 "allocated_bytes with a live tensor"
	expect_eq "$(stat_of reserved_bytes.all.current)" 0 "reserved_bytes with a live tensor"
	rm "$T/a" || fail "rm"
	expect_eq "$(free_bytes)" "$free" "device free memory after the free"
	expect_eq "$(stat_of num_device_alloc)" 0 "num_device_alloc"
}

case $case_name in
env_1_gives_a_freed_tensor_back_to_the_device_with_stats_at_0|\
ini_true_gives_a_freed_tensor_back_to_the_device_with_stats_at_0)
	expect_eq "$(setting)" true "no_memory_caching in config"
	uncached_round_trip
	;;
env_0_turns_off_the_ini_s_true)
	expect_eq "$(setting)" false "no_memory_caching in config"
	;;
env_2_is_on_as_torch_npu_reads_it)
	expect_eq "$(setting)" true "no_memory_caching in config"
	;;
*) fail "unknown case $case_name" ;;
esac
