/*
 * acl_rt_allocator.h at the path torch_npu's install tree gave it
 * (include/third_party/acl/inc/acl/), so that code written with
 * `#include "third_party/acl/inc/acl/acl_rt_allocator.h"` builds against npusim.pc.
 */
#include <acl/acl_rt_allocator.h>
