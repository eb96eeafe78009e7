/*
 * alloc_conf_impl.h - what the alloc_conf files share: the key tables'
 * shape, the parse state every value check reports through, the settings
 * table's columns and the text of refusals.
 */
#ifndef NPUMEMFS_ALLOC_CONF_IMPL_H
#define NPUMEMFS_ALLOC_CONF_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "alloc_conf.h"

#define MiB ((size_t)1 << 20)
#define KiB ((size_t)1 << 10)
#define STR_MAX sizeof(((struct npa_conf *)0)->last_string)
#define QUOTE_MAX 96
#define ECHO_MAX 64
#define NO_EFFECT (-1)

/* The string split as upstream's ConfigTokenizer does. */
struct tokens {
	char text[2 * STR_MAX];       /* each input byte gives at most 2 */
	const char *t[STR_MAX];
	size_t n;
};

struct parse;
struct entry;
typedef int (*value_fn)(struct parse *p, const struct entry *e,
			struct npa_conf *c);

struct keydef {
	const char *name;
	int key;           /* enum npa_conf_key, or NO_EFFECT */
	bool common;       /* AcceleratorAllocatorConfig's: parsed before the flavor's */
	value_fn parse;
};

struct dialect {
	const struct keydef *keys;
	size_t nkeys;
	const char *unknown_key;   /* format with the key */
	bool empty_is_noop;        /* torch_npu returns early on "" */
	bool expandable_excludes_split_gc;
	size_t base_addr_aligned;
};

/* A "key:value" or "key:[...]" of the string, as token indices. */
struct entry {
	const struct keydef *kd;
	size_t key, val, end;      /* val: value or '['; end: value or ']' */
};

struct parse {
	const struct dialect *d;
	const struct tokens *tk;
	const char *str;
	char *err;
	size_t errlen;
};

static inline const char *conf_tok(const struct parse *p, size_t i)
{
	return p->tk->t[i];
}

static inline bool conf_is_sep(const char *tok)
{
	return tok[1] == '\0' && strchr(",:[]", tok[0]) != NULL;
}

/* alloc_conf_keys.c */
const struct dialect *conf_dialect_of(const struct npa_flavor *flavor);
const struct keydef *conf_find_key(const struct dialect *d, const char *name);

/* alloc_conf_values.c: the settings table's print and compare columns. */
struct sbuf;
void conf_print_value(struct sbuf *out, const struct npa_conf *c,
		      enum npa_conf_key k);
bool conf_key_differs(const struct npa_conf *a, const struct npa_conf *b,
		      enum npa_conf_key k);

/* alloc_conf_text.c */
/* A printable copy of untrusted text, cut at `max` bytes with "...". */
void conf_sanitize(char *dst, size_t dstlen, const char *src, size_t max);

/* A key or value quoted back in a message: printable, at most ECHO_MAX bytes. */
struct echo {
	char s[ECHO_MAX + 4];
};

const char *conf_echo(struct echo *buf, const char *s);

/*
 * Upstream's text, then the string as given and the keys the flavor knows.
 * Always -EINVAL.
 */
int conf_fail(struct parse *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
