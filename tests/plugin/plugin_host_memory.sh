#!/usr/bin/env bash
# A plug-in that hands out host memory (posix_memalign) instead of device
# memory: its allocations succeed, but no tensor can be copied to or from
# them, and the log says why instead of a bare EIO.
. "$(dirname "$0")/plugin_lib.sh"
cat >"$WORK/hostmem.c" <<'C'
#include <stdlib.h>
#include <sys/types.h>
void *host_alloc(ssize_t size, int device, void *stream)
{
	void *p = NULL;
	(void)device, (void)stream;
	return posix_memalign(&p, 512, (size_t)size) ? NULL : p;
}
void host_free(void *p, ssize_t size, int device, void *stream)
{
	(void)size, (void)device, (void)stream;
	free(p);
}
C
"${CC:-cc}" -shared -fPIC "$WORK/hostmem.c" -o "$PRIVATE/hostmem.so" || fail "building the plug-in"
chmod 0755 "$PRIVATE/hostmem.so"
mount_fs
use "$PRIVATE/hostmem.so host_alloc host_free"
truncate -s 4096 "$MNT/tensors/device0/t" || fail "the allocation itself succeeds"
expect_fail "head -c 4 '$MNT/tensors/device0/t'" "Input/output error"
grep -q "tensors/device0/t: aclrtMemcpy refused 0x[0-9a-f]*: not device memory; .*(a plug-in must take device memory through the ACL API)$" \
	"$MNT/log" || fail "the log does not say why: $(tail -3 "$MNT/log")"
rm "$MNT/tensors/device0/t"
use caching
stop_fs
expect_eq "$STATUS" 0 "exit status after SIGTERM"
