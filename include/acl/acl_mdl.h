/*
 * acl_mdl.h - where older CANN releases (and the copy torch_npu vendored)
 * declared the model runtime instance (aclmdlRI) capture calls.
 *
 * Current CANN declares them in acl/acl_rt.h and keeps this header for
 * code that includes it; so does the simulator.
 */
#ifndef ACL_ACL_MDL_H
#define ACL_ACL_MDL_H

#include "acl_rt.h"

#endif /* ACL_ACL_MDL_H */
