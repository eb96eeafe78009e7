#!/usr/bin/env bash
# A daemon in the background (README's command 1, no -f) retires a plug-in
# whose host dies while nothing is calling it, as one in the foreground
# does: the thread that does so starts with the first plug-in host, after
# the daemon went to the background, and not before the fork, which no
# thread crosses.
. "$(dirname "$0")/plugin_lib.sh"
cat >>"$INI" <<INI
plugin_isolation = process
INI
cat >"$WORK/later.c" <<'C'
#include <pthread.h>
#include <unistd.h>
#include <acl/acl_rt.h>
static void *crash_later(void *arg)
{
	(void)arg;
	sleep(1);
	*(volatile int *)0 = 1;
	return NULL;
}
void *later_alloc(ssize_t size, int device, aclrtStream stream)
{
	void *p = NULL;
	pthread_t t;
	(void)stream;
	aclrtSetDevice(device);
	if (aclrtMalloc(&p, (size_t)size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
		return NULL;
	pthread_create(&t, NULL, crash_later, NULL);
	return p;
}
void later_free(void *ptr, ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	aclrtFree(ptr);
}
C
"${CC:-cc}" -shared -fPIC -I"$SRC_DIR/include" "$WORK/later.c" -o "$PRIVATE/later.so" -lpthread ||
	fail "building the plug-in"
chmod 0755 "$PRIVATE/later.so"

"$NPUMEMFS" --config "$INI" --log "$WORK/daemon.log" "$MNT" >"$WORK/start.out" 2>&1 ||
	fail "npumemfs did not start in the background: $(cat "$WORK/start.out")"
mounted || fail "npumemfs returned but nothing is mounted"
use "$PRIVATE/later.so later_alloc later_free"
truncate -s 4096 "$MNT/tensors/device0/t" || fail "the plug-in's allocation"
wait_current caching
expect_eq "$(current)" caching "current allocator after the host died"
grep -q "faulted in a thread of its own (outside any call): signal 11" "$MNT/log" ||
	fail "the log does not say the plug-in was retired: $(tail -3 "$MNT/log")"
rm -f "$MNT/tensors/device0/t"
fusermount3 -u "$MNT" || fail "unmount"
for _ in $(seq 100); do
	grep -q "no leaks" "$WORK/daemon.log" && break
	sleep 0.1
done
grep -q "invariant check: ok" "$WORK/daemon.log" || fail "no clean report: $(tail -5 "$WORK/daemon.log")"
echo PASS
