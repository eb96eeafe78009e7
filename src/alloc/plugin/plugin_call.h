/*
 * plugin_call.h - one call into a plug-in, as a value.
 *
 * Every function of the plug-in ABI is reached through a struct
 * plugin_call: the wrapper fills one, an executor runs it where the
 * plug-in lives (in this process behind the fault barrier, or in its
 * plug-in host over a channel) and says how it ended. Being plain data,
 * a call crosses a process boundary as it is.
 */
#ifndef NPA_PLUGIN_CALL_H
#define NPA_PLUGIN_CALL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <npumemfs/plugin.h>

struct plugin;

enum plugin_fn {
	PLUGIN_FN_ALLOC, PLUGIN_FN_FREE, PLUGIN_FN_RECORD_STREAM, PLUGIN_FN_ERASE_STREAM,
	PLUGIN_FN_BASE_ALLOC, PLUGIN_FN_RESET, PLUGIN_FN_MEMORY_FRACTION,
	PLUGIN_FN_GET_DEVICE_STATS, PLUGIN_FN_RESET_PEAK_STATUS, PLUGIN_FN_BEGIN_POOL,
	PLUGIN_FN_END_POOL, PLUGIN_FN_RELEASE_POOL, PLUGIN_FN_INIT,
	PLUGIN_NFNS,
	/* Not calls of the ABI, named when the host ends in them: */
	PLUGIN_FN_THREAD = PLUGIN_NFNS, /* a thread of its own, outside any call */
	PLUGIN_FN_DESC,                 /* an ACL allocator function it registered */
};

struct plugin_call {
	enum plugin_fn fn;
	void *ptr;
	ssize_t size;
	int device;
	aclrtStream stream;
	double fraction;
	struct npumemfs_mempool_id pool;
	npumemfs_stream_filter filter;
	void *arg;
	/* out */
	void *ret;
	size_t size_out;
	int checked;                          /* init_checked's answer */
	/* Last, so that a message carries the fields above without it. */
	struct npumemfs_device_stats stats;
};

/* How a call that did not return normally ended. */
enum plugin_end { PLUGIN_END_SIGNAL, PLUGIN_END_EXIT, PLUGIN_END_TIMEOUT, PLUGIN_END_LOST };

struct plugin_fault {
	enum plugin_end end;
	int sig;          /* PLUGIN_END_SIGNAL */
	void *addr;       /* si_addr, where addr_known */
	bool addr_known;  /* not for abort(), nor a death the host could not tell */
	int status;       /* PLUGIN_END_EXIT: the host's exit status */
	unsigned timeout_ms; /* PLUGIN_END_TIMEOUT */
	char detail[96];  /* PLUGIN_END_LOST: what was seen */
};

/* Run c on the plug-in's resolved functions, here, unguarded. */
void plugin_call_run(const struct plugin *p, struct plugin_call *c);
/* The plug-in's own name for the function a call runs. */
const char *plugin_call_symbol(const struct plugin *p, enum plugin_fn fn);
/* "signal 11 (Segmentation fault) at 0x10", "exit status 3", ... */
void plugin_fault_text(const struct plugin_fault *f, char *buf, size_t len);

#endif /* NPA_PLUGIN_CALL_H */
