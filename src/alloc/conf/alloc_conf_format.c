/*
 * alloc_conf_format.c - settings as text (ctl/alloc_conf): a line per key
 * the flavor knows, its value as the settings table prints it and where it
 * came from, then the keys accepted with no effect.
 */
#include <stddef.h>

#include "base/sbuf.h"

#include "alloc_conf_impl.h"

const char *npa_conf_origin_name(enum npa_conf_origin o)
{
	static const char *const names[] = {
		[NPA_ORIGIN_DEFAULT] = "default",
		[NPA_ORIGIN_INI] = "ini",
		[NPA_ORIGIN_CLI] = "cli",
		[NPA_ORIGIN_WRITE] = "write",
	};

	if ((unsigned)o >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[o];
}

int npa_conf_print(struct sbuf *out, const struct npa_conf *conf,
		   const struct npa_flavor *flavor)
{
	const struct dialect *d = conf_dialect_of(flavor);

	for (int k = 0; k < NPA_CONF_NKEYS; k++) {
		const char *name = npa_conf_key_name((enum npa_conf_key)k, flavor);
		if (!name)
			continue;
		sbuf_printf(out, "%s ", name);
		conf_print_value(out, conf, (enum npa_conf_key)k);
		sbuf_printf(out, " %s\n", npa_conf_origin_name(conf->origin[k]));
	}
	sbuf_puts(out, "# accepted, no effect on the simulator:");
	for (size_t i = 0; i < d->nkeys; i++)
		if (d->keys[i].key == NO_EFFECT)
			sbuf_printf(out, " %s", d->keys[i].name);
	sbuf_puts(out, "\n");
	return out->error;
}

int npa_conf_format(const struct npa_conf *conf, const struct npa_flavor *flavor,
		    char *buf, size_t buflen)
{
	struct sbuf text;

	sbuf_init(&text);
	npa_conf_print(&text, conf, flavor);
	int rc = sbuf_copy(&text, buf, buflen);
	sbuf_release(&text);
	return rc;
}
