/*
 * bad_traces.h - one malformed trace per kind of mistake, with the exact
 * message the parser must give. Good lines come first so the line number
 * in the message is checked too.
 */
#ifndef NPUMEMFS_TESTS_BAD_TRACES_H
#define NPUMEMFS_TESTS_BAD_TRACES_H

#include <stddef.h>

struct bad_trace {
	const char *name;    /* the test's name */
	const char *text;
	size_t len;          /* 0: strlen(text); else the text holds a NUL */
	const char *message; /* with the trace named "t" */
};

static const struct bad_trace bad_traces[] = {
	{ "unknown_command", "alloc a 1\nmalloc b 2\n", 0,
	  "t:2: unknown command 'malloc'" },
	{ "alloc_without_id", "# header\nalloc\n", 0, "t:2: alloc: missing ID SIZE" },
	{ "alloc_without_size", "alloc a 1\nalloc b\n", 0, "t:2: alloc: missing SIZE" },
	{ "alloc_with_three_options", "alloc a 1 stream=1 device=0 x=1\n", 0,
	  "t:1: alloc: extra field 'x=1'" },
	{ "free_without_id", "alloc a 1\n\nfree\n", 0, "t:3: free: missing ID" },
	{ "free_with_extra_field", "alloc a 1\nfree a b\n", 0, "t:2: free: extra field 'b'" },
	{ "record_stream_without_stream", "alloc a 1\nrecord_stream a\n", 0,
	  "t:2: record_stream: missing STREAM" },
	{ "sync_with_two_streams", "sync\nsync 1 2\n", 0, "t:2: sync: extra field '2'" },
	{ "empty_cache_with_argument", "empty_cache\nempty_cache now\n", 0,
	  "t:2: empty_cache: extra field 'now'" },
	{ "reset_peak_with_argument", "reset_peak 0\n", 0, "t:1: reset_peak: extra field '0'" },
	{ "size_with_unknown_suffix", "alloc a 1\nalloc b 12XB\n", 0, "t:2: bad size '12XB'" },
	{ "negative_size", "alloc a -5\n", 0, "t:1: bad size '-5'" },
	{ "size_that_overflows", "alloc a 20000000000GiB\n", 0,
	  "t:1: bad size '20000000000GiB'" },
	{ "unknown_option", "alloc a 1 strm=1\n", 0,
	  "t:1: bad option 'strm=1' (expected stream=S or device=D)" },
	{ "option_without_value_sign", "alloc a 1 stream\n", 0,
	  "t:1: bad option 'stream' (expected stream=S or device=D)" },
	{ "option_given_twice", "alloc a 1 stream=1 stream=2\n", 0,
	  "t:1: stream given twice" },
	{ "device_16", "alloc a 1 device=15\nalloc b 1 device=16\n", 0,
	  "t:2: device 16 out of range (0..15)" },
	{ "negative_device", "alloc a 1 device=-1\n", 0, "t:1: negative device -1" },
	{ "device_not_a_number", "alloc a 1 device=gpu0\n", 0, "t:1: bad device 'gpu0'" },
	{ "negative_stream", "alloc a 1\nrecord_stream a -2\n", 0, "t:2: negative stream -2" },
	{ "fractional_stream", "sync 1.5\n", 0, "t:1: bad stream '1.5'" },
	{ "stream_too_large", "alloc a 1 stream=2147483648\n", 0,
	  "t:1: stream 2147483648 too large (max 2147483647)" },
	{ "fraction_above_one", "fraction 1\nfraction 1.5\n", 0,
	  "t:2: Invalid fraction value: 1.5. Allowed range: 0~1" },
	{ "fraction_below_zero", "fraction -0.1\n", 0,
	  "t:1: Invalid fraction value: -0.1. Allowed range: 0~1" },
	{ "fraction_not_a_number", "fraction half\n", 0, "t:1: bad fraction 'half'" },
	{ "fraction_nan", "fraction nan\n", 0, "t:1: bad fraction 'nan'" },
	{ "fraction_with_stream", "fraction 0.5 stream=1\n", 0,
	  "t:1: bad option 'stream=1' (expected device=D)" },
	{ "fraction_without_value", "fraction\n", 0, "t:1: fraction: missing F" },
	{ "id_allocated_twice", "alloc a 1\nalloc b 1\nalloc a 2\n", 0,
	  "t:3: id 'a' is already allocated (line 1)" },
	{ "free_of_unknown_id", "alloc a 1\nfree z\n", 0, "t:2: free of unknown id 'z'" },
	{ "free_twice", "alloc a 1\nfree a\nfree a\n", 0, "t:3: free of id 'a', freed on line 2" },
	{ "record_stream_of_unknown_id", "record_stream q 1\n", 0,
	  "t:1: record_stream of unknown id 'q'" },
	{ "record_stream_after_free", "alloc a 1\nfree a\nrecord_stream a 1\n", 0,
	  "t:3: record_stream of id 'a', freed on line 2" },
	{ "nul_byte_in_line", "alloc a 1\nfree\0 a\n", 18, "t:2: NUL byte in line" },
};

#define NBAD_TRACES (sizeof(bad_traces) / sizeof(bad_traces[0]))

#endif /* NPUMEMFS_TESTS_BAD_TRACES_H */
