// npu_machine.c - see npu_machine.h.
#include <npumemfs/npusim.h>

#include "npu_machine.h"

int npu_machine_start(unsigned long long capacity)
{
	struct npusim_config cfg;

	npusim_config_default(&cfg, 1, capacity);
	return npusim_init(&cfg);
}

int npu_machine_launch_open(void *stream)
{
	return npusim_launch_open(stream) == ACL_SUCCESS ? 0 : -1;
}

int npu_machine_capturing(void *stream)
{
	return npusim_stream_capture_id(stream) != 0;
}
