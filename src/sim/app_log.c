/*
 * app_log.c - aclAppLog: an application's log line, filtered by level as
 * CANN's log (ASCEND_GLOBAL_LOG_LEVEL) and written where its
 * ASCEND_SLOG_PRINT_TO_STDOUT says; no log daemon, so stderr otherwise.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"

static const char *const level_names[] = { "DEBUG", "INFO", "WARNING", "ERROR" };

/* ASCEND_GLOBAL_LOG_LEVEL, 3 (error) when unset or not one of 0 to 4. */
static int threshold(void)
{
	const char *v = getenv("ASCEND_GLOBAL_LOG_LEVEL");

	if (v == NULL || strlen(v) != 1 || v[0] < '0' || v[0] > '4')
		return ACL_ERROR;
	return v[0] - '0';
}

static FILE *destination(void)
{
	const char *v = getenv("ASCEND_SLOG_PRINT_TO_STDOUT");

	return v != NULL && strcmp(v, "1") == 0 ? stdout : stderr;
}

void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line,
	       const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if ((int)logLevel < ACL_DEBUG || (int)logLevel > ACL_ERROR || (int)logLevel < threshold() ||
	    fmt == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(destination(), "[%s] APP(%ld):%s:%s:%u %s\n", level_names[logLevel], (long)getpid(),
		func ? func : "", file ? file : "", line, msg);
}
