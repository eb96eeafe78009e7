/*
 * acl_rt.h at the path torch_npu's install tree gives it
 * (include/third_party/acl/inc/acl/), so that a plug-in written with
 * `#include "third_party/acl/inc/acl/acl_rt.h"` builds against npusim.pc.
 */
#include <acl/acl_rt.h>
