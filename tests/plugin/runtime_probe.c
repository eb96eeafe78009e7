/*
 * runtime_probe.c - a plug-in that, asked for a tensor, first calls the
 * parts of the ACL runtime that are not memory for tensors and writes what
 * it got to the file $PROBE_LOG, one "name value..." line each: what the
 * plugin_runtime_* tests compare between a plug-in in the daemon and one
 * in a host of its own. Pointers are written only as how they compare,
 * since the daemon's addresses change from run to run.
 *
 * Each NAME_alloc probes one part and then serves the tensor as
 * passthrough does; probe_free gives it back.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <acl/acl_rt.h>

static void note(const char *fmt, ...)
{
	FILE *f = fopen(getenv("PROBE_LOG"), "a");
	va_list ap;

	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

static void *tensor(ssize_t size)
{
	void *p = NULL;

	return aclrtMallocAlign32(&p, (size_t)size, ACL_MEM_MALLOC_HUGE_FIRST) ? NULL : p;
}

void probe_free(void *p, ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	aclrtFree(p);
}

/* Device 1's context and device 0's: two, each making its device current;
 * a handle that is no context refused with the device left as it was. */
void *context_alloc(ssize_t size, int device, aclrtStream stream)
{
	aclrtContext c0 = NULL, c1 = NULL, again = NULL;
	int32_t d_after_c1 = -1, d_after_bad = -1;
	aclError rc1, rc0, set1, bad;
	int local;

	(void)stream;
	aclrtSetDevice(1);
	rc1 = aclrtGetCurrentContext(&c1);
	aclrtSetDevice(0);
	rc0 = aclrtGetCurrentContext(&c0);
	set1 = aclrtSetCurrentContext(c1);
	aclrtGetDevice(&d_after_c1);
	bad = aclrtSetCurrentContext(&local);
	aclrtGetDevice(&d_after_bad);
	aclrtSetCurrentContext(c0);
	aclrtGetCurrentContext(&again);
	note("get rc=%d,%d distinct=%d nonnull=%d", rc1, rc0, c0 != c1, c0 && c1);
	note("set device1 rc=%d device=%d", set1, d_after_c1);
	note("set other rc=%d device=%d", bad, d_after_bad);
	note("set device0 same=%d", again == c0);
	aclrtSetDevice(device);
	return tensor(size);
}

static void *fail_on_own_thread(void *arg)
{
	void *p = NULL;

	*(aclError *)arg = aclrtMalloc(&p, (size_t)1 << 62, ACL_MEM_MALLOC_HUGE_FIRST);
	((aclError *)arg)[1] = aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL);
	return NULL;
}

/* An absurd aclrtMalloc's code is the thread's last error until read
 * with aclrtGetLastError; a success after it leaves it; another thread's
 * failure is that thread's only. */
void *last_error_alloc(ssize_t size, int device, aclrtStream stream)
{
	aclError rc, peek, peek_after_ok, got, cleared, bad_level, theirs[2] = { 0, 0 };
	int32_t d = -1;
	pthread_t t;
	void *p = NULL;

	(void)device, (void)stream;
	aclrtGetLastError(ACL_RT_THREAD_LEVEL);
	note("start %d", aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL));
	rc = aclrtMalloc(&p, (size_t)1 << 62, ACL_MEM_MALLOC_HUGE_FIRST);
	peek = aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL);
	aclrtGetDevice(&d);
	peek_after_ok = aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL);
	got = aclrtGetLastError(ACL_RT_THREAD_LEVEL);
	cleared = aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL);
	bad_level = aclrtPeekAtLastError((aclrtLastErrLevel)7);
	note("malloc rc=%d peek=%d after_success=%d get=%d then=%d", rc, peek, peek_after_ok, got,
	     cleared);
	note("other level %d", bad_level);
	if (pthread_create(&t, NULL, fail_on_own_thread, theirs) == 0)
		pthread_join(t, NULL);
	note("own thread rc=%d its_peek=%d this_peek=%d", theirs[0], theirs[1],
	     aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL));
	return tensor(size);
}

static void usage_line(const char *when)
{
	aclrtMemUsageInfo info[4];
	size_t n = 99;
	aclError rc;

	memset(info, 0x5a, sizeof(info));
	rc = aclrtGetMemUsageInfo(0, info, 4, &n);
	note("%s rc=%d n=%zu name=%s cur=%llu peak=%llu", when, rc, n, info[0].name,
	     (unsigned long long)info[0].curMemSize, (unsigned long long)info[0].memPeakSize);
}

/* Device 0's usage before and after 4 MiB of the plug-in's own, and the
 * refusals: a device that does not exist, no room for an entry, nowhere
 * to say how many. */
void *mem_usage_alloc(ssize_t size, int device, aclrtStream stream)
{
	aclrtMemUsageInfo info;
	size_t n = 0;
	void *p = NULL;

	(void)device, (void)stream;
	usage_line("before");
	aclrtMallocAlign32(&p, 4u << 20, ACL_MEM_MALLOC_HUGE_FIRST);
	usage_line("holding");
	aclrtFree(p);
	usage_line("after");
	note("device 9 rc=%d", aclrtGetMemUsageInfo(9, &info, 1, &n));
	note("no room rc=%d", aclrtGetMemUsageInfo(0, &info, 0, &n));
	note("no count rc=%d", aclrtGetMemUsageInfo(0, &info, 1, NULL));
	note("device 9 no count rc=%d", aclrtGetMemUsageInfo(9, &info, 1, NULL));
	return tensor(size);
}

/* A block of its own exported by key and imported back: the block itself;
 * the key withdrawn by the close that finds no import left. */
void *ipc_key_alloc(ssize_t size, int device, aclrtStream stream)
{
	char key[ACL_IPC_HANDLE_SIZE] = "", again[ACL_IPC_HANDLE_SIZE] = "", short_key[8];
	void *p = NULL, *q = NULL, *r = NULL;
	aclError rc, rc2, imp, short_len, inside;

	(void)device, (void)stream;
	aclrtMalloc(&p, 2u << 20, ACL_MEM_MALLOC_HUGE_FIRST);
	rc = aclrtIpcMemGetExportKey(p, 2u << 20, key, sizeof(key), 0);
	rc2 = aclrtIpcMemGetExportKey(p, 1, again, sizeof(again), 0);
	short_len = aclrtIpcMemGetExportKey(p, 1, short_key, sizeof(short_key), 0);
	inside = aclrtIpcMemGetExportKey((char *)p + 4096, 1, again, sizeof(again), 0);
	note("export rc=%d,%d same_key=%d prefix=%.13s short=%d inside=%d", rc, rc2,
	     !strcmp(key, again), key, short_len, inside);
	imp = aclrtIpcMemImportByKey(&q, key, 0);
	note("import rc=%d same_block=%d", imp, q == p);
	note("close rc=%d", aclrtIpcMemClose(key));
	note("close again rc=%d", aclrtIpcMemClose(key));
	note("import withdrawn rc=%d", aclrtIpcMemImportByKey(&r, key, 0));
	note("close withdrawn rc=%d", aclrtIpcMemClose(key));
	note("unknown key rc=%d", aclrtIpcMemImportByKey(&r, "npusim-no-such-key", 0));
	aclrtFree(p);
	return tensor(size);
}

/* A physical handle of its own shared by number and imported back: the
 * same handle, one more reference, each freed once. */
void *shareable_alloc(ssize_t size, int device, aclrtStream stream)
{
	aclrtPhysicalMemProp prop = { .location = { 0, ACL_MEM_LOCATION_TYPE_DEVICE } };
	aclrtDrvMemHandle h = NULL, h2 = NULL, h3 = NULL;
	uint64_t number = 0, number2 = 0;
	aclError rc, rc2, imp;

	(void)device, (void)stream;
	aclrtMallocPhysical(&h, 2u << 20, &prop, 0);
	rc = aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 0, &number);
	rc2 = aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 0, &number2);
	note("export rc=%d,%d nonzero=%d same=%d", rc, rc2, number != 0, number == number2);
	note("bad flags rc=%d",
	     aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 2, &number2));
	imp = aclrtMemImportFromShareableHandle(number, 0, &h2);
	note("import rc=%d same_handle=%d", imp, h2 == h);
	note("import on device 1 rc=%d", aclrtMemImportFromShareableHandle(number, 1, &h3));
	note("free rc=%d", aclrtFreePhysical(h2));
	note("free rc=%d", aclrtFreePhysical(h));
	note("free again rc=%d", aclrtFreePhysical(h));
	note("import freed rc=%d", aclrtMemImportFromShareableHandle(number, 0, &h3));
	return tensor(size);
}

/* Two lines: one at ERROR, kept at the default level, and one at INFO,
 * dropped. */
void *app_log_alloc(ssize_t size, int device, aclrtStream stream)
{
	(void)device, (void)stream;
	aclAppLog(ACL_ERROR, "probe_func", "probe.c", 42, "kept %d %s", 7, "seven");
	aclAppLog(ACL_INFO, "probe_func", "probe.c", 43, "dropped %d", 8);
	note("logged");
	return tensor(size);
}

/* A stream made with a priority and flags is a stream like any other; a
 * flag the runtime does not know is refused. */
void *stream_config_alloc(ssize_t size, int device, aclrtStream stream)
{
	aclrtStream s = NULL, bad = NULL;
	aclError rc, rc_bad;
	int32_t id = -1;

	(void)device, (void)stream;
	rc = aclrtCreateStreamWithConfig(&s, 3, ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC);
	aclrtStreamGetId(s, &id);
	rc_bad = aclrtCreateStreamWithConfig(&bad, 0, 0x80);
	note("create rc=%d id=%d unknown_flag=%d", rc, id, rc_bad);
	note("synchronize rc=%d", aclrtSynchronizeStream(s));
	note("destroy rc=%d", aclrtDestroyStream(s));
	return tensor(size);
}
