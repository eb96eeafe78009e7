/*
 * capture_mode.c - torch.npu.graph's capture_error_mode by name, with
 * Graph.cpp's refusal. Apart from graph.c so that a trace parser can use
 * it without the allocator.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "graph.h"

int npa_graph_parse_mode(const char *v, aclmdlRICaptureMode *mode, char *err, size_t errlen)
{
	static const char *const names[] = { "global", "thread_local", "relaxed" };

	for (int i = 0; i < 3; i++) {
		if (strcmp(v, names[i]) == 0) {
			*mode = (aclmdlRICaptureMode)i;
			return 0;
		}
	}
	snprintf(err, errlen,
		 "Unknown capture error mode. Expected `global`, `thread_local`, or "
		 "`relaxed`, got %s", v);
	return -EINVAL;
}

