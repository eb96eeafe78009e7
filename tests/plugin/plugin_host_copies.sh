#!/usr/bin/env bash
# A plug-in in its own host copies to and from device memory as it would
# in one process: a copy of any size arrives whole (the host's side goes a
# message's worth at a time), a copy that would run past its block is
# refused before a byte lands, and an asynchronous copy with a host side
# on a capturing stream is refused (ACL_ERROR_RT_STREAM_CAPTURED): a
# graph would replay it from a message that is gone by then.
. "$(dirname "$0")/plugin_lib.sh"
cat >>"$INI" <<INI
plugin_isolation = process
INI
export COPIES_LOG=$WORK/copies.log
: >"$COPIES_LOG"
cat >"$WORK/copies.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <acl/acl_rt.h>

static void note(const char *fmt, long a, long b, long c)
{
	FILE *f = fopen(getenv("COPIES_LOG"), "a");

	if (f) {
		fprintf(f, fmt, a, b, c);
		fclose(f);
	}
}

static unsigned char *pattern(size_t n, unsigned seed)
{
	unsigned char *p = malloc(n ? n : 1);

	for (size_t i = 0; p && i < n; i++)
		p[i] = (unsigned char)(i * 131 + seed);
	return p;
}

/* H2D of the whole block, D2H back, then its first half D2D onto its
 * second and the second half read back. */
void *fill_alloc(ssize_t size, int device, aclrtStream stream)
{
	size_t n = (size_t)size, half = n / 2;
	unsigned char *want = pattern(n, 7), *got = malloc(n);
	void *p = NULL;
	aclError rc;
	int same = 0;

	(void)device, (void)stream;
	if (aclrtMallocAlign32(&p, n, ACL_MEM_MALLOC_HUGE_FIRST))
		return NULL;
	rc = aclrtMemcpy(p, n, want, n, ACL_MEMCPY_HOST_TO_DEVICE);
	if (!rc)
		rc = aclrtMemcpy(got, n, p, n, ACL_MEMCPY_DEVICE_TO_HOST);
	same = !rc && !memcmp(got, want, n);
	if (!rc)
		rc = aclrtMemcpy((char *)p + half, n - half, p, half, ACL_MEMCPY_DEVICE_TO_DEVICE);
	if (!rc)
		rc = aclrtMemcpy(got, half, (char *)p + half, half, ACL_MEMCPY_DEVICE_TO_HOST);
	same = same && !rc && !memcmp(got, want, half);
	note("fill size=%ld rc=%ld same=%ld\n", size, rc, same);
	free(want), free(got);
	return p;
}

/* The block filled, then a copy one byte past its end: refused, and the
 * block still holds the first pattern. */
void *over_alloc(ssize_t size, int device, aclrtStream stream)
{
	size_t n = (size_t)size;
	unsigned char *want = pattern(n, 7), *other = pattern(n + 1, 99), *got = malloc(n);
	void *p = NULL;
	aclError rc, over;

	(void)device, (void)stream;
	if (aclrtMallocAlign32(&p, n, ACL_MEM_MALLOC_HUGE_FIRST))
		return NULL;
	rc = aclrtMemcpy(p, n, want, n, ACL_MEMCPY_HOST_TO_DEVICE);
	over = aclrtMemcpy(p, n + 1, other, n + 1, ACL_MEMCPY_HOST_TO_DEVICE);
	if (!rc)
		rc = aclrtMemcpy(got, n, p, n, ACL_MEMCPY_DEVICE_TO_HOST);
	note("over size=%ld refused=%ld same=%ld\n", size, over != ACL_SUCCESS,
	     !rc && !memcmp(got, want, n));
	free(want), free(other), free(got);
	return p;
}

/* An asynchronous host-to-device copy on the allocation's stream. */
void *async_alloc(ssize_t size, int device, aclrtStream stream)
{
	unsigned char bytes[4096];
	void *p = NULL;

	(void)device;
	memset(bytes, 0x5a, sizeof(bytes));
	if (aclrtMallocAlign32(&p, (size_t)size, ACL_MEM_MALLOC_HUGE_FIRST))
		return NULL;
	note("async size=%ld rc=%ld\n", size,
	     aclrtMemcpyAsync(p, (size_t)size, bytes, sizeof(bytes), ACL_MEMCPY_HOST_TO_DEVICE,
			      stream), 0);
	return p;
}

void ok_free(void *p, ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	aclrtFree(p);
}
C
"${CC:-cc}" -shared -fPIC -Wall -Werror -I"$SRC_DIR/include" "$WORK/copies.c" -o "$PRIVATE/copies.so" ||
	fail "building the plug-in"
chmod 0755 "$PRIVATE/copies.so"
mount_fs

# 1. A copy of 2 MiB and 3 bytes, past a message's 64 KiB, both ways and
# device to device.
use "$PRIVATE/copies.so fill_alloc ok_free"
truncate -s $((2 * 1048576 + 3)) "$MNT/tensors/device0/big" || fail "the filled allocation"
expect_eq "$(grep -c '^fill .* rc=0 same=1$' "$COPIES_LOG")" 1 \
	"a 2 MiB copy arrives whole: $(cat "$COPIES_LOG")"
rm "$MNT/tensors/device0/big"

# 2. One byte past the block: refused with nothing written.
use "$PRIVATE/copies.so over_alloc ok_free"
truncate -s 300000 "$MNT/tensors/device0/over" || fail "the overrun allocation"
expect_eq "$(grep '^over' "$COPIES_LOG" | sed 's/size=[0-9]* //')" "over refused=1 same=1" \
	"a copy past the block's end"
rm "$MNT/tensors/device0/over"

# 3. An async copy with a host side: done outside a capture, refused in one.
use "$PRIVATE/copies.so async_alloc ok_free"
truncate -s 8192 "$MNT/tensors/device0/stream1/a" || fail "the async allocation"
echo "create g" >"$MNT/ctl/graph" || fail "create a graph"
echo "capture_begin g stream=1" >"$MNT/ctl/graph" || fail "capture_begin"
truncate -s 8192 "$MNT/tensors/device0/stream1/c" || fail "the allocation in the capture"
echo "capture_end g" >"$MNT/ctl/graph" || fail "capture_end"
expect_eq "$(grep '^async' "$COPIES_LOG" | sed 's/size=[0-9]* //' | tr '\n' ' ')" \
	"async rc=0 async rc=107027 " "an async copy outside and inside a capture"
rm "$MNT/tensors/device0/stream1/a" "$MNT/tensors/device0/stream1/c"
echo "reset g" >"$MNT/ctl/graph" || fail "reset"
expect_eq "$(current)" plugin3 "the plug-in stays current throughout"
echo "PASS"
