# plugin_freed_pointer.sh - a plug-in whose alloc hands out device memory
# it no longer holds: a pointer it already gave back with aclrtFree, or a
# block smaller than the request. A tensor there would fail every read with
# EIO, so the allocation is refused at alloc (EFAULT), counted, logged with
# the reason, and given back through the plug-in's free; other tensors
# keep their bytes.
. "$(dirname "$0")/plugin_lib.sh"
BUILD=${BUILD_DIR:?BUILD_DIR must name the build tree}
export PKG_CONFIG_PATH=$BUILD/pkgconfig
cat >"$WORK/stale.c" <<'C'
#include <sys/types.h>
#include "acl/acl_rt.h"
static int frees;
int stale_frees(void) { return frees; }
/* Freed before it is handed out. */
void *stale_alloc(ssize_t size, int device, aclrtStream stream)
{
	void *p = NULL;
	(void)device, (void)stream;
	if (aclrtMalloc(&p, (size_t)size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
		return NULL;
	aclrtFree(p);
	return p;
}
/* Half of what was asked. */
void *short_alloc(ssize_t size, int device, aclrtStream stream)
{
	void *p = NULL;
	(void)device, (void)stream;
	return aclrtMalloc(&p, (size_t)size / 2, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS ? p : NULL;
}
void stale_free(void *p, ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	frees++;
	aclrtFree(p);
}
C
cc -shared -fPIC "$WORK/stale.c" $(pkg-config --cflags --libs npusim) -o "$WORK/stale.so" \
	2>"$WORK/build.log" || fail "the plug-in does not build: $(cat "$WORK/build.log")"
install -m 0755 "$WORK/stale.so" "$PRIVATE/"
mount_fs

printf 'keep' >"$MNT/tensors/device0/keep"
use "$PRIVATE/stale.so stale_alloc stale_free"
expect_fail "truncate -s 1M '$MNT/tensors/device0/t'" "Bad address"
expect_contains "$(grep -v UserWarning "$MNT/log" | tail -1)" \
	"returned 0x" "log after a freed pointer"
expect_contains "$(grep -v UserWarning "$MNT/log" | tail -1)" \
	"for 1048576 bytes on device 0, device memory no live block holds (freed or unmapped): given back, allocation refused" \
	"log after a freed pointer"
expect_eq "$(awk '$1 == "refused_not_device" { print $2 }' "$MNT/ctl/allocator")" 1 \
	"refused_not_device after a freed pointer"
expect_eq "$(stat_of num_device_alloc 0)" 0 "no allocation counted"
[ -e "$MNT/tensors/device0/t" ] && [ "$(stat -c %s "$MNT/tensors/device0/t")" -ne 0 ] &&
	fail "the refused tensor has a size"

use "$PRIVATE/stale.so short_alloc stale_free"
expect_fail "truncate -s 1M '$MNT/tensors/device0/s'" "Bad address"
expect_contains "$(grep -v UserWarning "$MNT/log" | tail -1)" \
	"only its first 524320 bytes are live device memory: given back" "log after a short block"
# aclrtMalloc's block of 512 KiB (+32 bytes) went back through stale_free:
# device 0 holds only keep's 2 MiB segment of the caching allocator.
expect_eq "$(cut -d' ' -f1 "$MNT/devices/device0/mem_info")" 1071644672 \
	"free device memory after the short block"
expect_eq "$(awk '$1 == "refused_not_device" { print $2 }' "$CTL")" 1 \
	"refused_not_device after a short block"

use caching
expect_eq "$(cat "$MNT/tensors/device0/keep")" keep "the caching allocator's tensor"
stop_fs
expect_eq "$STATUS" 0 "exit status"
echo PASS
