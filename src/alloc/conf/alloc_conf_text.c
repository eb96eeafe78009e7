/*
 * alloc_conf_text.c - the text of alloc_conf's refusals: untrusted input
 * made printable, and the error message every refusal ends in.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "base/sbuf.h"

#include "alloc_conf_impl.h"

void conf_sanitize(char *dst, size_t dstlen, const char *src, size_t max)
{
	size_t i;

	for (i = 0; src[i] && i < max && i + 4 < dstlen; i++) {
		unsigned char ch = (unsigned char)src[i];
		dst[i] = (ch < 0x20 || ch >= 0x7f) ? '?' : (char)ch;
	}
	if (src[i]) {
		memcpy(dst + i, "...", 3);
		i += 3;
	}
	dst[i] = '\0';
}

const char *conf_echo(struct echo *buf, const char *s)
{
	conf_sanitize(buf->s, sizeof(buf->s), s, ECHO_MAX);
	return buf->s;
}

/*
 * Upstream's texts end in ".", ", " or nothing; what follows fits each.
 * The head's trailing spaces go first.
 */
static const char *after_text(struct sbuf *msg)
{
	while (msg->len && msg->data[msg->len - 1] == ' ')
		msg->data[--msg->len] = '\0';
	return msg->len && strchr(",.", msg->data[msg->len - 1]) ? " " : "; ";
}

/* The message is made whole, then cut to the caller's buffer. */
int conf_fail(struct parse *p, const char *fmt, ...)
{
	char quoted[QUOTE_MAX + 4];
	struct sbuf msg;
	va_list ap;

	if (!p->err || !p->errlen)
		return -EINVAL;
	sbuf_init(&msg);
	va_start(ap, fmt);
	sbuf_vprintf(&msg, fmt, ap);
	va_end(ap);
	conf_sanitize(quoted, sizeof(quoted), p->str, QUOTE_MAX);
	sbuf_printf(&msg, "%sinput \"%s\"; valid keys:", after_text(&msg), quoted);
	for (size_t i = 0; i < p->d->nkeys; i++)
		sbuf_printf(&msg, "%s %s", i ? "," : "", p->d->keys[i].name);
	sbuf_copy(&msg, p->err, p->errlen);
	sbuf_release(&msg);
	return -EINVAL;
}
