/*
 * faulty.c - a plug-in that breaks the rules on purpose, for tests.
 *
 * The alloc function named in the spec picks the fault; faulty_free goes
 * with all of them:
 *     faulty_alloc           a correct pass-through (the control case)
 *     faulty_null3_alloc     returns NULL on every third call
 *     faulty_overlap_alloc   returns the previous block again while it lives
 *     faulty_unaligned_alloc returns a pointer 16 bytes past the device's
 *     faulty_steal_alloc     returns the address in $FAULTY_STEAL (hex),
 *                            memory it never allocated (another's)
 *     faulty_segv_alloc      writes through a null pointer (a real crash)
 *     faulty_segv_oom_alloc  a pass-through that writes through a null
 *                            pointer when the device is out of memory
 *                            instead of returning NULL: only a small
 *                            enough device makes it crash
 *     faulty_loop_alloc      never returns (plugin_timeout ends it)
 *     faulty_raise_alloc     raises SIGSEGV itself (the same, quiet under
 *                            valgrind, which reports the real one)
 *     faulty_abort_free      calls abort() (the free to use with faulty_alloc)
 *     faulty_init_refuse     an init_checked hook that refuses the load
 *     faulty_init_refuse_small  the same on a device of less than 48 MiB
 *     faulty_init_crash      an init hook that raises SIGSEGV
 * A pointer faulty_free does not know (a fake it made up) is ignored, so a
 * wrapper can give every refused pointer back safely.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include <acl/acl_rt.h>

#define FAULTY_MAX_LIVE 4096
#define FAULTY_SKEW 16

struct real_block {
	char *handed; /* what the caller got */
	char *base;   /* what the device gave */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct real_block live[FAULTY_MAX_LIVE];
static int nlive;
static long calls;
static char *last_handed;

/* Lock held. */
static void *device_block(size_t size, size_t skew)
{
	void *p = NULL;

	if (nlive == FAULTY_MAX_LIVE ||
	    aclrtMalloc(&p, size + skew, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
		return NULL;
	live[nlive].base = p;
	live[nlive].handed = (char *)p + skew;
	last_handed = live[nlive].handed;
	return live[nlive++].handed;
}

static int find_live(const void *handed)
{
	for (int i = 0; i < nlive; i++)
		if (live[i].handed == handed)
			return i;
	return -1;
}

void *faulty_alloc(ssize_t size, int device, aclrtStream stream)
{
	(void)device, (void)stream;
	pthread_mutex_lock(&lock);
	void *p = device_block((size_t)size, 0);
	pthread_mutex_unlock(&lock);
	return p;
}

void *faulty_null3_alloc(ssize_t size, int device, aclrtStream stream)
{
	pthread_mutex_lock(&lock);
	long n = ++calls;
	pthread_mutex_unlock(&lock);
	if (n % 3 == 0)
		return NULL;
	return faulty_alloc(size, device, stream);
}

void *faulty_overlap_alloc(ssize_t size, int device, aclrtStream stream)
{
	(void)device, (void)stream;
	pthread_mutex_lock(&lock);
	void *p = last_handed && find_live(last_handed) >= 0
			  ? last_handed
			  : device_block((size_t)size, 0);
	pthread_mutex_unlock(&lock);
	return p;
}

void *faulty_unaligned_alloc(ssize_t size, int device, aclrtStream stream)
{
	(void)device, (void)stream;
	pthread_mutex_lock(&lock);
	void *p = device_block((size_t)size, FAULTY_SKEW);
	pthread_mutex_unlock(&lock);
	return p;
}

void *faulty_steal_alloc(ssize_t size, int device, aclrtStream stream)
{
	const char *addr = getenv("FAULTY_STEAL");

	(void)size, (void)device, (void)stream;
	return addr ? (void *)(uintptr_t)strtoull(addr, NULL, 16) : NULL;
}

/* A sanitizer build would catch the write itself and end the process:
 * the point here is the crash. */
__attribute__((no_sanitize("address", "undefined")))
void *faulty_segv_alloc(ssize_t size, int device, aclrtStream stream)
{
	volatile int *nowhere = NULL;

	(void)size, (void)device, (void)stream;
	*nowhere = 1;
	return NULL;
}

__attribute__((no_sanitize("address", "undefined")))
void *faulty_segv_oom_alloc(ssize_t size, int device, aclrtStream stream)
{
	void *p = faulty_alloc(size, device, stream);
	volatile int *nowhere = NULL;

	if (p == NULL)
		*nowhere = 1;
	return p;
}

void *faulty_loop_alloc(ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	for (;;)
		pause();
}

/* A memory_fraction hook that crashes (set_per_process_memory_fraction). */
void faulty_raise_fraction(double fraction, int device)
{
	(void)fraction, (void)device;
	raise(SIGSEGV);
}

void *faulty_raise_alloc(ssize_t size, int device, aclrtStream stream)
{
	(void)size, (void)device, (void)stream;
	raise(SIGSEGV);
	return NULL;
}

void faulty_abort_free(void *ptr, ssize_t size, int device, aclrtStream stream)
{
	(void)ptr, (void)size, (void)device, (void)stream;
	abort();
}

void faulty_free(void *ptr, ssize_t size, int device, aclrtStream stream)
{
	char *base = NULL;

	(void)size, (void)device, (void)stream;
	pthread_mutex_lock(&lock);
	int i = find_live(ptr);
	if (i >= 0) {
		base = live[i].base;
		live[i] = live[--nlive];
	}
	pthread_mutex_unlock(&lock);
	if (base)
		aclrtFree(base);
	else
		fprintf(stderr, "faulty: free of %p, which was never real, ignored\n",
			ptr);
}

/* Writes "init(N)" to the file $FAULTY_INIT_LOG names: what init was given. */
void faulty_init_record(int device_count)
{
	const char *path = getenv("FAULTY_INIT_LOG");
	FILE *f = path ? fopen(path, "w") : NULL;

	if (f) {
		fprintf(f, "init(%d)\n", device_count);
		fclose(f);
	}
}

int faulty_init_refuse(int device_count)
{
	(void)device_count;
	return -1;
}

int faulty_init_refuse_small(int device_count)
{
	size_t free_b = 0, total = 0;

	(void)device_count;
	if (aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total) != ACL_SUCCESS)
		return -1;
	return total < ((size_t)48 << 20) ? -1 : 0;
}

void faulty_init_crash(int device_count)
{
	(void)device_count;
	raise(SIGSEGV);
}
