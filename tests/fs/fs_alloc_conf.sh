#!/usr/bin/env bash
# ctl/alloc_conf: every option's value and origin; a run-time write changes
# what new allocations do; a shaping option with memory held is EBUSY; a
# malformed string is EINVAL with upstream's message and the valid keys;
# a refused write changes nothing. empty_virt_addr_cache without expandable
# segments is EINVAL with torch_npu's text.
INI_TEXT='[device]
count = 1
capacity = 4GiB
malloc_latency_us = 0
free_latency_us = 0
[allocator]
alloc_conf = garbage_collection_threshold:0.8'
. "$(dirname "$0")/lib.sh"
mount_fs
T=$MNT/tensors/device0
CONF=$MNT/ctl/alloc_conf

settings() { sed '/^usage: /,$d' "$CONF"; }
has() { grep -qxF "$1" "$CONF" || fail "ctl/alloc_conf lacks '$1': $(settings)"; }
stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$MNT/stats/device0"; }

expect_eq "$(stat -c %a "$CONF")" 600 "mode of ctl/alloc_conf"
has "max_split_size_mb - default"
has "max_non_split_rounding_mb 20 default"
has "garbage_collection_threshold 0.8 ini"
has "expandable_segments False default"
has "large_segment_size_mb 20 default"
has "per_process_memory_fraction 1 default"
has "last_error: none"
expect_eq "$(settings | grep -vc '^#')" 16 "one line per option (4 of them the pinned host allocator's)"

# Without expandable segments there is nothing to release that way.
expect_fail "echo 1 > '$MNT/ctl/empty_virt_addr_cache'" "Invalid argument"
UNSUPPORTED="Unsupported config for empty_virt_addr_cache, please enable expandable_segments."
grep -qxF "last_error: $UNSUPPORTED" "$MNT/ctl/empty_virt_addr_cache" \
	|| fail "empty_virt_addr_cache does not show torch_npu's text"
grep -qF "ctl/empty_virt_addr_cache: $UNSUPPORTED" "$MNT/log" \
	|| fail "log lacks torch_npu's text"

# 300 MiB, freed, then 100 MiB: with no max_split_size the cached 302 MiB
# segment is split (one device malloc); with max_split_size_mb:200 it is
# oversize, kept whole for big requests, and 100 MiB gets its own 102 MiB.
round() {
	echo 1 >"$MNT/ctl/reset_accumulated_stats"
	truncate -s 300M "$T/a" && rm "$T/a" && truncate -s 100M "$T/b" \
		|| fail "300M then 100M"
}
round
expect_eq "$(stat_of num_device_alloc)" 1 "device mallocs with no split limit"
expect_eq "$(value memory_reserved)" 316669952 "reserved with no split limit"
expect_eq "$(stat_of oversize_allocations.allocated)" 0 "oversize with no split limit"
rm "$T/b" && echo 1 >"$MNT/ctl/empty_cache"

echo max_split_size_mb:200 >"$CONF" || fail "max_split_size_mb:200 refused"
has "max_split_size_mb 200 write"
# A write is a whole setting string, as upstream: unnamed resettable keys reset.
has "garbage_collection_threshold - write"
grep -qF 'alloc_conf: set "max_split_size_mb:200"' "$MNT/log" || fail "log lacks the write"
round
expect_eq "$(stat_of num_device_alloc)" 2 "device mallocs with max_split_size_mb:200"
expect_eq "$(value memory_reserved)" 423624704 "reserved: 302 MiB cached + 102 MiB"
expect_eq "$(stat_of oversize_allocations.allocated)" 1 "the 300M block is oversize"

# b is live: shaping options cannot change, and say which and why.
BEFORE=$(settings)
expect_fail "echo large_segment_size_mb:40 > '$CONF'" "Device or resource busy"
has "last_error: large_segment_size_mb cannot change while the allocator holds memory: segments already made keep the old value; free every block and empty the cache first"
grep -qF "ctl/alloc_conf: large_segment_size_mb cannot change" "$MNT/log" \
	|| fail "log lacks the EBUSY reason"
expect_fail "echo multi_stream_lazy_reclaim:True > '$CONF'" "Device or resource busy"
has "last_error: multi_stream_lazy_reclaim cannot change at run time: it is read once when the allocator starts"
expect_eq "$(settings)" "$BEFORE" "settings after EBUSY"

# Malformed strings: EINVAL, quoted in the message with the valid keys.
KEYS="valid keys: max_split_size_mb, max_non_split_rounding_mb, garbage_collection_threshold, roundup_power2_divisions, expandable_segments, large_segment_size_mb, segment_size_mb, base_addr_aligned_kb, page_size, per_process_memory_fraction, throw_on_npumalloc_oom, multi_stream_lazy_reclaim,"
bad() { # string, upstream's words
	expect_fail "printf '%s' '$1' > '$CONF'" "Invalid argument"
	grep -qF "last_error: $2" "$CONF" || fail "'$1': last_error lacks '$2': $(grep last_error "$CONF")"
	grep -qF "input \"$1\"" "$CONF" || fail "'$1' is not quoted"
	grep -qF "$KEYS" "$CONF" || fail "'$1': the valid keys are not listed"
	grep -qF "ctl/alloc_conf: $2" "$MNT/log" || fail "'$1': not in log"
	expect_eq "$(settings)" "$BEFORE" "settings after '$1'"
}
bad "foo:1" "Unrecognized key 'foo' in NPU allocator config"
FIRST_REFUSAL=$(cat "$CONF")
bad "Max_split_size_mb:200" "Unrecognized key 'Max_split_size_mb'"
bad ":5" "Unrecognized key ':'"
bad "max_split_size_mb" "Error, expecting max_split_size_mb value"
bad "max_split_size_mb::200" "Error, expecting max_split_size_mb value"
bad "max_split_size_mb:abc" "CachingAllocator option max_split_size_mb is invalid."
bad "max_split_size_mb:99999999999999999999" "CachingAllocator option max_split_size_mb is invalid."
bad "max_split_size_mb:10" "CachingAllocator option max_split_size_mb too small, must be >= 20"
bad "garbage_collection_threshold:1.5" "garbage_collect_threshold is invalid, set it in (0.0, 1.0)"
bad "garbage_collection_threshold:0" "garbage_collect_threshold is invalid, set it in (0.0, 1.0)"
bad "expandable_segments:maybe" "Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'maybe'"
bad "roundup_power2_divisions:3" "For roundups, the divisions has to be power of 2"
bad "roundup_power2_divisions:[1:2" "Expected closing bracket ']' in ConfigTokenizer but reached end of config"
bad "per_process_memory_fraction:2" "per_process_memory_fraction is invalid, set it in [0.0, 1.0]"
bad "base_addr_aligned_kb:-1" "CachingAllocator option base_addr_aligned_kb is invalid."
bad "large_segment_size_mb:0" "CachingAllocator option large_segment_size_mb must be > 10 MB"
# The same refusal again: the whole file is byte for byte what it was.
bad "foo:1" "Unrecognized key 'foo' in NPU allocator config"
expect_eq "$(cat "$CONF")" "$FIRST_REFUSAL" "ctl/alloc_conf after 17 refusals"

# With nothing held, the shaping option may change.
rm "$T/b" && echo 1 >"$MNT/ctl/empty_cache"
echo large_segment_size_mb:40 >"$CONF" || fail "large_segment_size_mb:40 with no memory held"
has "large_segment_size_mb 40 write"
has "max_non_split_rounding_mb 40 write"

stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
