/*
 * json_sbuf.c - jansson's dump callback feeding an sbuf, so a large
 * snapshot is written once instead of built as a string and copied.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

void json_open_last_member(struct sbuf *out, const char *name, char *tail, size_t len)
{
	char *end = out->len ? strrchr(out->data, '}') : NULL;

	tail[0] = '\0';
	if (end == NULL)
		return;
	snprintf(tail, len, "%s", end + 1);
	out->len = (size_t)(end - out->data);
	while (out->len > 0 && strchr(" \n", out->data[out->len - 1]))
		out->len--;
	sbuf_printf(out, ",\n  \"%s\": ", name);
}

void json_close_last_member(struct sbuf *out, const char *tail)
{
	sbuf_printf(out, "\n}%s", tail);
}
