/*
 * ipc.c - memory shared with another process: device blocks by key
 * (aclrtIpcMem*) and physical handles by number (aclrtMem*ShareableHandle).
 * One process here, so an import is the memory exported itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

struct sim_ipc_key {
	char key[ACL_IPC_HANDLE_SIZE];
	char *ptr;
	unsigned imports;
	UT_hash_handle hh;
};

static struct sim_ipc_key *key_find(const char *key)
{
	struct sim_ipc_key *k = NULL;

	HASH_FIND_STR(sim.ipc.keys, key, k);
	return k;
}

/* Bytes of the aclrtMalloc block starting at p, 0 if none does; under d->lock. */
static uint64_t block_bytes(struct sim_device *d, const char *p)
{
	struct extent *e = sim_block_at(d, p);

	return e ? e->npages * d->page_size : 0;
}

/* The one key a block of `d` starting at p is exported as. */
static void key_name(const struct sim_device *d, const char *p, char name[ACL_IPC_HANDLE_SIZE])
{
	snprintf(name, ACL_IPC_HANDLE_SIZE, "npusim-ipc-%d-%llx", (int)(d - sim.device),
		 (unsigned long long)(p - d->base));
}

/* Under d->lock: the block's key, made at its first export. */
static aclError export_key(struct sim_device *d, char *p, char *key)
{
	struct sim_ipc_key *k;
	char name[ACL_IPC_HANDLE_SIZE];

	key_name(d, p, name);
	pthread_mutex_lock(&sim.ipc.lock);
	k = key_find(name);
	if (!k && (k = calloc(1, sizeof(*k))) != NULL) {
		memcpy(k->key, name, sizeof(name));
		k->ptr = p;
		HASH_ADD_STR(sim.ipc.keys, key, k);
		atomic_fetch_add(&sim.ipc.nkeys, 1);
	}
	pthread_mutex_unlock(&sim.ipc.lock);
	if (!k)
		return sim_status(ACL_ERROR_BAD_ALLOC);
	memcpy(key, name, sizeof(name));
	return ACL_SUCCESS;
}

aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key, size_t len, uint64_t flag)
{
	struct sim_device *d;
	aclError rc;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!key || len < ACL_IPC_HANDLE_SIZE || size == 0 ||
	    (flag & ~ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION) != 0)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	d = devPtr ? sim_device_holding(devPtr) : NULL;
	if (!d)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	pthread_mutex_lock(&d->lock);
	if (size > block_bytes(d, devPtr)) {
		pthread_mutex_unlock(&d->lock);
		sim_set_recent_error("aclrtIpcMemGetExportKey: %p is not the start of a block of at "
				     "least %zu bytes", devPtr, size);
		return sim_status(ACL_ERROR_INVALID_PARAM);
	}
	rc = export_key(d, devPtr, key);
	pthread_mutex_unlock(&d->lock);
	return rc;
}

aclError aclrtIpcMemImportByKey(void **devPtr, const char *key, uint64_t flag)
{
	struct sim_ipc_key *k;

	(void)flag;
	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!devPtr || !key)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	pthread_mutex_lock(&sim.ipc.lock);
	k = key_find(key);
	if (k) {
		k->imports++;
		*devPtr = k->ptr;
	}
	pthread_mutex_unlock(&sim.ipc.lock);
	return k ? ACL_SUCCESS : sim_status(ACL_ERROR_INVALID_PARAM);
}

aclError aclrtIpcMemClose(const char *key)
{
	struct sim_ipc_key *k;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!key)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	pthread_mutex_lock(&sim.ipc.lock);
	k = key_find(key);
	if (k && k->imports > 0) {
		k->imports--;
	} else if (k) {
		HASH_DEL(sim.ipc.keys, k);
		atomic_fetch_sub(&sim.ipc.nkeys, 1);
		free(k);
	}
	pthread_mutex_unlock(&sim.ipc.lock);
	return k ? ACL_SUCCESS : sim_status(ACL_ERROR_INVALID_PARAM);
}

void sim_ipc_forget(const struct sim_device *d, const char *ptr)
{
	struct sim_ipc_key *k;
	char name[ACL_IPC_HANDLE_SIZE];

	/* Most blocks were never exported: no name to make, no lock to take. */
	if (atomic_load(&sim.ipc.nkeys) == 0)
		return;
	key_name(d, ptr, name);
	pthread_mutex_lock(&sim.ipc.lock);
	if ((k = key_find(name)) != NULL) {
		HASH_DEL(sim.ipc.keys, k);
		atomic_fetch_sub(&sim.ipc.nkeys, 1);
	}
	pthread_mutex_unlock(&sim.ipc.lock);
	free(k);
}

void sim_ipc_reset(void)
{
	struct sim_ipc_key *k, *tmp;

	pthread_mutex_lock(&sim.ipc.lock);
	HASH_ITER(hh, sim.ipc.keys, k, tmp) {
		HASH_DEL(sim.ipc.keys, k);
		free(k);
	}
	atomic_store(&sim.ipc.nkeys, 0);
	pthread_mutex_unlock(&sim.ipc.lock);
}

aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle, aclrtMemHandleType handleType,
					 uint64_t flags, uint64_t *shareableHandle)
{
	struct vm_phys *ph;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!shareableHandle || handleType != ACL_MEM_HANDLE_TYPE_NONE ||
	    (flags & ~ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION) != 0)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	pthread_mutex_lock(&sim.vm_lock);
	ph = vm_phys_find(handle);
	if (ph && ph->shareable == 0)
		ph->shareable = ++sim.ipc.next_shareable;
	if (ph)
		*shareableHandle = ph->shareable;
	pthread_mutex_unlock(&sim.vm_lock);
	return ph ? ACL_SUCCESS : sim_status(ACL_ERROR_INVALID_PARAM);
}

aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId,
					   aclrtDrvMemHandle *handle)
{
	struct vm_phys *ph, *tmp, *found = NULL;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!handle || shareableHandle == 0)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	pthread_mutex_lock(&sim.vm_lock);
	HASH_ITER(hh, sim.vm.handles, ph, tmp) {
		if (ph->shareable == shareableHandle && ph->device == deviceId) {
			found = ph; /* numbers are never given twice */
			break;
		}
	}
	if (found) {
		found->refs++;
		*handle = found;
	}
	pthread_mutex_unlock(&sim.vm_lock);
	return found ? ACL_SUCCESS : sim_status(ACL_ERROR_INVALID_PARAM);
}
