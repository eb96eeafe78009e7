/*
 * alloc_conf_text.c - the bounded text of alloc_conf: output cut short
 * instead of overrun, untrusted input made printable, and the error
 * message every refusal ends in.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc_conf_impl.h"

void conf_out_printf(struct out *o, const char *fmt, ...)
{
	size_t room = o->off < o->len ? o->len - o->off : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->off : NULL, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room) {
		o->full = true;
		o->off = o->len ? o->len - 1 : 0;
		return;
	}
	o->off += (size_t)n;
}

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

/* Upstream's texts end in ".", ", " or nothing; what follows fits each. */
static const char *after_text(char *s)
{
	size_t n = strlen(s);

	while (n && s[n - 1] == ' ')
		s[--n] = '\0';
	return n && strchr(",.", s[n - 1]) ? " " : "; ";
}

int conf_fail(struct parse *p, const char *fmt, ...)
{
	char head[320], quoted[QUOTE_MAX + 4];
	struct out o = { p->err, p->errlen, 0, false };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	conf_sanitize(quoted, sizeof(quoted), p->str, QUOTE_MAX);
	if (!p->err || !p->errlen)
		return -EINVAL;
	conf_out_printf(&o, "%s%sinput \"%s\"; valid keys:", head, after_text(head),
			quoted);
	for (size_t i = 0; i < p->d->nkeys; i++)
		conf_out_printf(&o, "%s %s", i ? "," : "", p->d->keys[i].name);
	return -EINVAL;
}
