/*
 * invariant.c - the report of a broken invariant (invariant.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "invariant.h"

int npa_broken(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EFAULT;
}
