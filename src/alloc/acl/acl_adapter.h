/*
 * acl_adapter.h - an allocator of the switch registered as a stream's ACL
 * allocator, the way torchair registers torch_npu's (NpuAllocator over
 * MallocBlock / FreeBlock / GetBlockPtr, one per stream): alloc gives a
 * block handle of the named allocator, free gives it back, the address is
 * the handle's pointer, and alloc-advise allocates ignoring the address
 * advised (as MindSpore's does).
 *
 * Adapters outlive their registration while the runtime still holds
 * blocks of theirs: a stream registered again, or unregistered, with
 * workspace outstanding loses nothing, each block going back through the
 * allocator that gave it. Thread-safe.
 */
#ifndef NPUMEMFS_ACL_ADAPTER_H
#define NPUMEMFS_ACL_ADAPTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <acl/acl_rt.h>

#include "alloc/switch/allocator_switch.h"

struct acl_adapters;

int acl_adapters_create(struct sw *sw, struct acl_adapters **out);
/* Unregister what is still registered; the runtime must hold no block of
 * theirs any more (its users free their workspace first). */
void acl_adapters_destroy(struct acl_adapters *as);

/*
 * Register allocator `name` ("caching" or "pluginK") for `stream` of
 * `device`. -ENOENT for no such allocator; -EINVAL when the runtime
 * refuses, with its return code named in err
 * ("aclrtAllocatorRegister: ACL_ERROR_INVALID_PARAM (100000) ...").
 */
int acl_adapters_register(struct acl_adapters *as, const char *name, int device,
			  aclrtStream stream, char *err, size_t errlen);
/* aclrtAllocatorUnregister(stream), whoever registered it. */
int acl_adapters_unregister(struct acl_adapters *as, aclrtStream stream, char *err,
			    size_t errlen);
/*
 * Keep adapter `obj` (an object read from the runtime's registration)
 * while its functions may be called: an unregister meanwhile unlinks it
 * but frees it only at the last unpin. False if `obj` is no adapter, or
 * one freed already (the caller reads the registration again after the
 * pin: unchanged, it is safe to call).
 */
bool acl_adapters_pin(struct acl_adapters *as, const void *obj);
/* Let go of a pin; false if `obj` holds none (not an adapter). */
bool acl_adapters_unpin(struct acl_adapters *as, const void *obj);
/* Which allocator an adapter object serves ("caching", "plugin1"), or
 * NULL if `obj` is not one of these adapters. Copied into buf. */
const char *acl_adapters_owner(struct acl_adapters *as, aclrtAllocator obj, char *buf,
			       size_t len);

/* CANN's name for a return code, "ACL_ERROR_INVALID_PARAM (100000)". */
const char *acl_error_name(aclError e, char *buf, size_t len);

#endif /* NPUMEMFS_ACL_ADAPTER_H */
