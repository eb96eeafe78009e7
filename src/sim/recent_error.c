/*
 * recent_error.c - a failed call, per thread, as CANN keeps it for the
 * thread that called: its reason in words (aclGetRecentErrMsg) and its
 * code (aclrtPeekAtLastError, aclrtGetLastError).
 */
#include <stdarg.h>
#include <stdio.h>

#include "sim.h"

static _Thread_local char recent[512];
static _Thread_local aclError last_error;
/* What the last read returned: it stays valid until the next read. */
static _Thread_local char shown[512];

void sim_set_recent_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(recent, sizeof(recent), fmt, ap);
	va_end(ap);
}

aclError sim_span_refused(const char *call, uint64_t span_pages, uint64_t npages)
{
	sim_set_recent_error("%s: %llu pages are free but no run of them is left in the "
			     "simulator's span of %llu pages, cut up by earlier allocations: a "
			     "limit of the simulator, not of the device", call,
			     (unsigned long long)npages, (unsigned long long)span_pages);
	return sim_status(ACL_ERROR_RT_MEMORY_ALLOCATION);
}

const char *aclGetRecentErrMsg(void)
{
	if (recent[0] == '\0')
		return NULL;
	snprintf(shown, sizeof(shown), "%s", recent);
	recent[0] = '\0';
	return shown;
}

aclError sim_status(aclError e)
{
	if (e != ACL_SUCCESS)
		last_error = e;
	return e;
}

aclError aclrtPeekAtLastError(aclrtLastErrLevel level)
{
	if (level != ACL_RT_THREAD_LEVEL)
		return ACL_ERROR_INVALID_PARAM;
	return last_error;
}

aclError aclrtGetLastError(aclrtLastErrLevel level)
{
	aclError e;

	if (level != ACL_RT_THREAD_LEVEL)
		return ACL_ERROR_INVALID_PARAM;
	e = last_error;
	last_error = ACL_SUCCESS;
	return e;
}
