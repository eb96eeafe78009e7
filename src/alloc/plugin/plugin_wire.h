/*
 * plugin_wire.h - the messages between the daemon and a plug-in host.
 *
 * A host is a process of its own that loads one plug-in and runs its
 * calls; the device the plug-in allocates from stays the daemon's. Three
 * kinds of socket (SOCK_SEQPACKET, so a message is one read) join them:
 *
 *   ctl    daemon -> host: a new lane's socket (SCM_RIGHTS), nothing else;
 *   lane   one call at a time, started by the daemon (PW_CALL, PW_DESC):
 *          while the host runs it, the plug-in's ACL calls come back on the
 *          same lane (PW_ACL, PW_FILTER) and the daemon's thread that is
 *          waiting serves them, so they run on the thread, and with the
 *          current device, of the daemon's caller, as they would in one
 *          process; the call ends with PW_RETURN;
 *   async  host -> daemon: ACL calls from the plug-in's own threads.
 *
 * Every value the host sends is untrusted: the daemon checks each pointer
 * and handle against what this host was given before using it.
 */
#ifndef NPA_PLUGIN_WIRE_H
#define NPA_PLUGIN_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "plugin_call.h"

/* Descriptors a host starts with. */
#define PW_FD_CTL 3
#define PW_FD_ASYNC 4
#define PW_FD_OBJECT 5
/* host -> daemon, written once from the host's fault handler: what a
 * signal's siginfo says (struct pw_fault), which the exit status cannot. */
#define PW_FD_FAULT 6

/* How a host ends by itself: the daemon broke the protocol or went away. */
#define PW_EXIT_PROTOCOL 120
#define PW_EXIT_DAEMON_GONE 121

/* The largest payload a message carries (an aclrtMemcpy's bytes). */
#define PW_MAX_DATA (64u << 10)
/* aclrtGetMemUsageInfo's entries that one answer carries. */
#define PW_MEM_USAGE_FITS (PW_MAX_DATA / sizeof(aclrtMemUsageInfo))

enum pw_kind {
	PW_CALL = 1,    /* daemon -> host: run a plugin_call */
	PW_RETURN,      /* host -> daemon: the call returned (and its results) */
	PW_ACL,         /* host -> daemon: an ACL function the plug-in called */
	PW_ACL_RETURN,  /* daemon -> host */
	PW_FILTER,      /* host -> daemon: a pool's stream filter, asked */
	PW_FILTER_RETURN,
	PW_DESC,        /* daemon -> host: a function of an ACL allocator descriptor */
	PW_LOAD,        /* daemon -> host: load the object, resolve (names in data) */
};

/* The ACL runtime a plug-in sees, forwarded one call per message. */
#define PW_ACL_OPS(X)                                                          \
	X(GetRecentErrMsg) X(SetDevice) X(GetDevice) X(GetDeviceCount)         \
	X(SynchronizeDevice) X(Malloc) X(MallocAlign32) X(Free) X(GetMemInfo) \
	X(PointerGetAttributes) X(MemGetAddressRange) X(Memcpy) X(MemcpyAsync) \
	X(MallocHost) X(FreeHost) X(MemGetAllocationGranularity)               \
	X(ReserveMemAddress) X(ReleaseMemAddress) X(MallocPhysical)            \
	X(FreePhysical) X(MapMem) X(UnmapMem) X(CreateStream) X(DestroyStream) \
	X(SynchronizeStream) X(StreamGetId) X(CreateEvent) X(RecordEvent)      \
	X(QueryEventStatus) X(SynchronizeEvent) X(DestroyEvent)                \
	X(AllocatorCreateDesc) X(AllocatorDestroyDesc) X(AllocatorSetObjToDesc) \
	X(AllocatorSetAllocFuncToDesc) X(AllocatorSetFreeFuncToDesc)           \
	X(AllocatorSetAllocAdviseFuncToDesc)                                   \
	X(AllocatorSetGetAddrFromBlockFuncToDesc) X(AllocatorRegister)         \
	X(AllocatorUnregister) X(AllocatorGetByStream)                         \
	X(MallocBlock) X(FreeBlock) X(GetBlockPtr) X(GetBlockSize)             \
	X(GetCurrentContext) X(SetCurrentContext) X(GetMemUsageInfo)           \
	X(CreateStreamWithConfig) X(IpcMemGetExportKey) X(IpcMemImportByKey)   \
	X(IpcMemClose) X(MemExportToShareableHandle)                           \
	X(MemImportFromShareableHandle) X(AppLog)

enum pw_acl_op {
#define PW_X(name) PW_ACL_##name,
	PW_ACL_OPS(PW_X)
#undef PW_X
	PW_NACL_OPS
};

/* A descriptor's four functions (PW_DESC's op). */
enum pw_desc_fn { PW_DESC_ALLOC, PW_DESC_FREE, PW_DESC_ALLOC_ADVISE, PW_DESC_ADDR };

struct pw_fault {
	int32_t sig;
	uint64_t addr;
};

/* A call's fields but its stats, which only get_device_stats returns (in
 * data): a message is three cache lines, not nineteen. */
#define PW_CALL_BYTES offsetof(struct plugin_call, stats)

struct pw_msg {
	uint32_t kind;     /* enum pw_kind */
	uint32_t op;       /* enum plugin_fn, pw_acl_op or pw_desc_fn */
	int32_t rc;        /* an aclError, or a load's -errno */
	uint32_t len;      /* bytes of data[] */
	uint64_t v[8];     /* arguments in, results out */
	_Alignas(8) unsigned char call[PW_CALL_BYTES]; /* PW_CALL and its PW_RETURN */
	_Alignas(8) char data[];
};

/* A call into and out of a message. */
static inline void pw_put_call(struct pw_msg *m, const struct plugin_call *c)
{
	memcpy(m->call, c, PW_CALL_BYTES);
	if (c->fn == PLUGIN_FN_GET_DEVICE_STATS && m->kind == PW_RETURN) {
		memcpy(m->data, &c->stats, sizeof(c->stats));
		m->len = sizeof(c->stats);
	}
}

static inline void pw_get_call(const struct pw_msg *m, struct plugin_call *c)
{
	memcpy(c, m->call, PW_CALL_BYTES);
	if (c->fn == PLUGIN_FN_GET_DEVICE_STATS && m->kind == PW_RETURN &&
	    m->len == sizeof(c->stats))
		memcpy(&c->stats, m->data, sizeof(c->stats));
}

#define PW_MSG_MAX (sizeof(struct pw_msg) + PW_MAX_DATA)

#endif /* NPA_PLUGIN_WIRE_H */
