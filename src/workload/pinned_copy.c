/*
 * pinned_copy.c - non-blocking copies between pinned and device tensors
 * (pinned_copy.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include <npumemfs/npusim.h>

#include "alloc/acl/acl_adapter.h"
#include "alloc/host/host_allocator.h"
#include "pinned_copy.h"

struct copy_job {
	struct tensor_store *ts;
	aclrtStream current;
	const char *tensor;
	aclrtMemcpyKind kind;
	char *err;
	size_t errlen;
	bool found;  /* the pinned tensor exists */
};

static int runtime_failed(struct copy_job *j, const char *call, aclError e)
{
	char name[64];

	snprintf(j->err, j->errlen, "%s: %s", call, acl_error_name(e, name, sizeof(name)));
	return -EIO;
}

/* Under the pinned store's lock: the block is the tensor's throughout. */
static int copy_block(void *arg, struct npa_host *host, void *ptr, uint64_t size)
{
	struct copy_job *j = arg;
	aclrtStream s = j->current;
	aclError e;
	int rc;

	j->found = true;
	rc = ts_copy_async(j->ts, j->tensor, ptr, size, j->kind, &s, j->err, j->errlen);

	if (rc != 0 || size == 0)
		return rc;
	/* Kernel-like work has no ACL call; the simulator's own launch it is. */
	if ((e = npusim_launch_open(s)) != ACL_SUCCESS)
		return runtime_failed(j, "npusim_launch_open", e);
	rc = npa_host_record_event(host, ptr, s);
	if (rc < 0) {
		snprintf(j->err, j->errlen, "CachingHostAllocator_recordEvent: out of memory");
		return rc;
	}
	/* Memory the allocator does not know: upstream synchronizes instead. */
	if (rc == 0 && (e = aclrtSynchronizeStream(s)) != ACL_SUCCESS)
		return runtime_failed(j, "aclrtSynchronizeStream", e);
	return 0;
}

int pinned_copy(struct pinned_store *ps, const char *pinned, struct tensor_store *ts,
		const char *tensor, enum pinned_copy_dir dir, aclrtStream current,
		char *err, size_t errlen)
{
	struct copy_job j = {
		.ts = ts, .current = current, .tensor = tensor, .err = err, .errlen = errlen,
		.kind = dir == PINNED_H2D ? ACL_MEMCPY_HOST_TO_DEVICE : ACL_MEMCPY_DEVICE_TO_HOST,
	};
	int rc = ps_use(ps, pinned, copy_block, &j);

	if (!j.found)
		snprintf(err, errlen, "no pinned tensor %s", pinned);
	return rc;
}
