/*
 * alloc_conf_format.c - settings as text (ctl/alloc_conf), the names of
 * where each came from, and which keys two settings disagree on.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The shortest text strtod() reads back as exactly `v`. */
static void format_double(struct out *o, double v)
{
	char b[32];

	for (int prec = 1; prec <= 17; prec++) {
		snprintf(b, sizeof(b), "%.*g", prec, v);
		if (strtod(b, NULL) == v)
			break;
	}
	conf_out_printf(o, "%s", b);
}

/*
 * "[1:d0,2:d1,...,>:dt]": each interval up to the start of the run that
 * ends the table, then '>' for that run. Interval 0 is always explicit
 * because '>' only fills above the last entry.
 */
static void format_divisions(struct out *o, const unsigned *div)
{
	size_t tail = NPA_ROUNDUP_INTERVALS - 1;

	while (tail > 1 && div[tail - 1] == div[NPA_ROUNDUP_INTERVALS - 1])
		tail--;
	conf_out_printf(o, "[");
	for (size_t i = 0; i < tail; i++)
		conf_out_printf(o, "%llu:%u,", 1ull << i, div[i]);
	conf_out_printf(o, ">:%u]", div[tail]);
}

static void format_value(struct out *o, const struct npa_conf *c,
			 enum npa_conf_key k)
{
	switch (k) {
	case NPA_CONF_max_split_size_mb:
		if (c->max_split_size == SIZE_MAX)
			conf_out_printf(o, "-");
		else
			conf_out_printf(o, "%zu", c->max_split_size / MiB);
		break;
	case NPA_CONF_max_non_split_rounding_mb:
		conf_out_printf(o, "%zu", c->max_non_split_rounding / MiB);
		break;
	case NPA_CONF_garbage_collection_threshold:
		if (c->garbage_collection_threshold == 0.0)
			conf_out_printf(o, "-");
		else
			format_double(o, c->garbage_collection_threshold);
		break;
	case NPA_CONF_roundup_power2_divisions:
		format_divisions(o, c->roundup_power2_divisions);
		break;
	case NPA_CONF_expandable_segments:
		conf_out_printf(o, "%s", c->expandable_segments ? "True" : "False");
		break;
	case NPA_CONF_large_segment_size_mb:
		conf_out_printf(o, "%zu", c->large_segment_size / MiB);
		break;
	case NPA_CONF_segment_size_mb:
		if (c->segment_size == 0)
			conf_out_printf(o, "-");
		else
			conf_out_printf(o, "%zu", c->segment_size / MiB);
		break;
	case NPA_CONF_base_addr_aligned_kb:
		conf_out_printf(o, "%zu", c->base_addr_aligned / KiB);
		break;
	case NPA_CONF_page_size:
		conf_out_printf(o, "%s", c->page_size_1g ? "1g" : "-");
		break;
	case NPA_CONF_per_process_memory_fraction:
		format_double(o, c->per_process_memory_fraction);
		break;
	case NPA_CONF_throw_on_npumalloc_oom:
		conf_out_printf(o, "%s", c->throw_on_npumalloc_oom ? "True" : "False");
		break;
	case NPA_CONF_multi_stream_lazy_reclaim:
		conf_out_printf(o, "%s", c->multi_stream_lazy_reclaim ? "True" : "False");
		break;
	case NPA_CONF_NKEYS:
		break;
	}
}

int npa_conf_format(const struct npa_conf *conf, const struct npa_flavor *flavor,
		    char *buf, size_t buflen)
{
	const struct dialect *d = conf_dialect_of(flavor);
	struct out o = { buf, buflen, 0, false };

	if (buf && buflen)
		buf[0] = '\0';
	for (int k = 0; k < NPA_CONF_NKEYS; k++) {
		const char *name = npa_conf_key_name((enum npa_conf_key)k, flavor);
		if (!name)
			continue;
		conf_out_printf(&o, "%s ", name);
		format_value(&o, conf, (enum npa_conf_key)k);
		conf_out_printf(&o, " %s\n", npa_conf_origin_name(conf->origin[k]));
	}
	conf_out_printf(&o, "# accepted, no effect on the simulator:");
	for (size_t i = 0; i < d->nkeys; i++)
		if (d->keys[i].key == NO_EFFECT)
			conf_out_printf(&o, " %s", d->keys[i].name);
	conf_out_printf(&o, "\n");
	return o.full ? -ENOSPC : (int)o.off;
}

bool conf_key_differs(const struct npa_conf *a, const struct npa_conf *b,
		      enum npa_conf_key k)
{
	switch (k) {
	case NPA_CONF_max_split_size_mb:
		return a->max_split_size != b->max_split_size;
	case NPA_CONF_max_non_split_rounding_mb:
		return a->max_non_split_rounding != b->max_non_split_rounding;
	case NPA_CONF_garbage_collection_threshold:
		return a->garbage_collection_threshold != b->garbage_collection_threshold;
	case NPA_CONF_roundup_power2_divisions:
		return memcmp(a->roundup_power2_divisions, b->roundup_power2_divisions,
			      sizeof(a->roundup_power2_divisions)) != 0;
	case NPA_CONF_expandable_segments:
		return a->expandable_segments != b->expandable_segments;
	case NPA_CONF_large_segment_size_mb:
		return a->large_segment_size != b->large_segment_size;
	case NPA_CONF_segment_size_mb:
		return a->segment_size != b->segment_size;
	case NPA_CONF_base_addr_aligned_kb:
		return a->base_addr_aligned != b->base_addr_aligned;
	case NPA_CONF_page_size:
		return a->page_size_1g != b->page_size_1g;
	case NPA_CONF_per_process_memory_fraction:
		return a->per_process_memory_fraction != b->per_process_memory_fraction;
	case NPA_CONF_throw_on_npumalloc_oom:
		return a->throw_on_npumalloc_oom != b->throw_on_npumalloc_oom;
	case NPA_CONF_multi_stream_lazy_reclaim:
		return a->multi_stream_lazy_reclaim != b->multi_stream_lazy_reclaim;
	case NPA_CONF_NKEYS:
		break;
	}
	return false;
}

int npa_conf_diff(const struct npa_conf *a, const struct npa_conf *b,
		  enum npa_conf_key *keys, int max)
{
	int n = 0;

	for (int k = 0; k < NPA_CONF_NKEYS; k++) {
		if (!conf_key_differs(a, b, (enum npa_conf_key)k))
			continue;
		if (keys && n < max)
			keys[n] = (enum npa_conf_key)k;
		n++;
	}
	return n;
}
