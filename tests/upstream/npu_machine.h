// npu_machine.h - the simulated NPU for upstream_npu_replay, in words that
// need neither npumemfs' ACL headers nor torch_npu's (which would clash):
// what npumem-replay sets up and asks of libnpusim (npumemfs/npusim.h).
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

// One device of `capacity` bytes, 2 MiB pages, as npumem-replay's
// default machine; 0 or a negative errno.
int npu_machine_start(unsigned long long capacity);
// Work on `stream` that ends only when it or the device is synchronized.
int npu_machine_launch_open(void* stream);
// Whether `stream` captures now.
int npu_machine_capturing(void* stream);

#ifdef __cplusplus
}
#endif
