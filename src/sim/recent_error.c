/*
 * recent_error.c - aclGetRecentErrMsg: a failed call's reason in words, per
 * thread, as CANN's error manager keeps it for the thread that called.
 */
#include <stdarg.h>
#include <stdio.h>

#include "sim.h"

static _Thread_local char recent[512];
/* What the last read returned: it stays valid until the next read. */
static _Thread_local char shown[512];

void sim_set_recent_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(recent, sizeof(recent), fmt, ap);
	va_end(ap);
}

const char *aclGetRecentErrMsg(void)
{
	if (recent[0] == '\0')
		return NULL;
	snprintf(shown, sizeof(shown), "%s", recent);
	recent[0] = '\0';
	return shown;
}
