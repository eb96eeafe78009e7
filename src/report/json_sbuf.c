/*
 * json_sbuf.c - jansson's dump callback feeding an sbuf, so a large
 * snapshot is written once instead of built as a string and copied.
 */
#include <errno.h>

#include "json_sbuf.h"

static int append_cb(const char *buf, size_t size, void *data)
{
	return sbuf_append(data, buf, size) ? -1 : 0;
}

int json_to_sbuf(struct sbuf *out, const json_t *j, size_t flags)
{
	if (json_dump_callback(j, append_cb, out, flags) != 0)
		return out->error ? out->error : -ENOMEM;
	return sbuf_puts(out, "\n");
}
