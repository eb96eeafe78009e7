/*
 * alloc_conf_values.c - the settings table: one row per key saying where
 * its value lives in struct npa_conf, how ctl/alloc_conf prints it, how two
 * settings compare on it, and whether it may change while blocks are live.
 *
 * A row's type holds the printing and comparing of a kind of value; the
 * row holds what differs between keys of one kind (unit, the value that
 * has no upstream spelling, the words of a flag). Printed values are in
 * upstream's syntax so that the text parses back (alloc_conf.h).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sbuf.h"

#include "alloc_conf_impl.h"

struct setting;

/* How one kind of value is printed and compared. */
struct value_type {
	void (*print)(struct sbuf *out, const struct setting *s, const void *v);
	bool (*differs)(const void *a, const void *b);
};

struct setting {
	const struct value_type *type;
	size_t at;            /* offset of the value in struct npa_conf */
	size_t unit;          /* sizes: bytes per unit printed */
	size_t unset;         /* optional sizes: the value printed as "-" */
	const char *no, *yes; /* flags: the words for false and true */
	bool runtime_safe;    /* npa_conf_key_runtime_safe */
};

static void print_size(struct sbuf *out, const struct setting *s, const void *v)
{
	sbuf_printf(out, "%zu", *(const size_t *)v / s->unit);
}

/* "-" for the value meaning "not set", which upstream has no word for. */
static void print_optional_size(struct sbuf *out, const struct setting *s,
				const void *v)
{
	if (*(const size_t *)v == s->unset)
		sbuf_puts(out, "-");
	else
		print_size(out, s, v);
}

static bool size_differs(const void *a, const void *b)
{
	return *(const size_t *)a != *(const size_t *)b;
}

/* The shortest text strtod() reads back as exactly the value. */
static void print_real(struct sbuf *out, const struct setting *s, const void *v)
{
	double d = *(const double *)v;
	char b[32];

	(void)s;
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(b, sizeof(b), "%.*g", prec, d);
		if (strtod(b, NULL) == d)
			break;
	}
	sbuf_puts(out, b);
}

/* 0 is "off", which upstream cannot spell. */
static void print_optional_real(struct sbuf *out, const struct setting *s,
				const void *v)
{
	if (*(const double *)v == 0.0)
		sbuf_puts(out, "-");
	else
		print_real(out, s, v);
}

static bool real_differs(const void *a, const void *b)
{
	return *(const double *)a != *(const double *)b;
}

static void print_flag(struct sbuf *out, const struct setting *s, const void *v)
{
	sbuf_puts(out, *(const bool *)v ? s->yes : s->no);
}

static bool flag_differs(const void *a, const void *b)
{
	return *(const bool *)a != *(const bool *)b;
}

/*
 * "[1:d0,2:d1,...,>:dt]": each interval up to the start of the run that
 * ends the table, then '>' for that run. Interval 0 is always explicit
 * because '>' only fills above the last entry.
 */
static void print_divisions(struct sbuf *out, const struct setting *s,
			    const void *v)
{
	const unsigned *div = v;
	size_t tail = NPA_ROUNDUP_INTERVALS - 1;

	(void)s;
	while (tail > 1 && div[tail - 1] == div[NPA_ROUNDUP_INTERVALS - 1])
		tail--;
	sbuf_puts(out, "[");
	for (size_t i = 0; i < tail; i++)
		sbuf_printf(out, "%llu:%u,", 1ull << i, div[i]);
	sbuf_printf(out, ">:%u]", div[tail]);
}

static bool divisions_differ(const void *a, const void *b)
{
	return memcmp(a, b, NPA_ROUNDUP_INTERVALS * sizeof(unsigned)) != 0;
}

static const struct value_type size_type = { print_size, size_differs };
static const struct value_type optional_size_type = { print_optional_size, size_differs };
static const struct value_type real_type = { print_real, real_differs };
static const struct value_type optional_real_type = { print_optional_real, real_differs };
static const struct value_type flag_type = { print_flag, flag_differs };
static const struct value_type divisions_type = { print_divisions, divisions_differ };

#define AT(field) offsetof(struct npa_conf, field)

static const struct setting settings[NPA_CONF_NKEYS] = {
	[NPA_CONF_max_split_size_mb] = {
		.type = &optional_size_type, .at = AT(max_split_size),
		.unit = MiB, .unset = SIZE_MAX, .runtime_safe = true },
	[NPA_CONF_max_non_split_rounding_mb] = {
		.type = &size_type, .at = AT(max_non_split_rounding),
		.unit = MiB, .runtime_safe = true },
	[NPA_CONF_garbage_collection_threshold] = {
		.type = &optional_real_type, .at = AT(garbage_collection_threshold),
		.runtime_safe = true },
	[NPA_CONF_roundup_power2_divisions] = {
		.type = &divisions_type, .at = AT(roundup_power2_divisions),
		.runtime_safe = true },
	[NPA_CONF_expandable_segments] = {
		.type = &flag_type, .at = AT(expandable_segments),
		.no = "False", .yes = "True", .runtime_safe = true },
	[NPA_CONF_large_segment_size_mb] = {
		.type = &size_type, .at = AT(large_segment_size), .unit = MiB },
	[NPA_CONF_segment_size_mb] = {
		.type = &optional_size_type, .at = AT(segment_size),
		.unit = MiB, .unset = 0 },
	[NPA_CONF_base_addr_aligned_kb] = {
		.type = &size_type, .at = AT(base_addr_aligned), .unit = KiB },
	[NPA_CONF_page_size] = {
		.type = &flag_type, .at = AT(page_size_1g), .no = "-", .yes = "1g" },
	[NPA_CONF_per_process_memory_fraction] = {
		.type = &real_type, .at = AT(per_process_memory_fraction),
		.runtime_safe = true },
	[NPA_CONF_throw_on_npumalloc_oom] = {
		.type = &flag_type, .at = AT(throw_on_npumalloc_oom),
		.no = "False", .yes = "True", .runtime_safe = true },
	[NPA_CONF_multi_stream_lazy_reclaim] = {
		.type = &flag_type, .at = AT(multi_stream_lazy_reclaim),
		.no = "False", .yes = "True" },
	[NPA_CONF_pinned_max_round_threshold_mb] = {
		.type = &optional_size_type, .at = AT(pinned_max_round_threshold),
		.unit = MiB, .unset = SIZE_MAX, .runtime_safe = true },
	[NPA_CONF_pinned_max_cached_size_mb] = {
		.type = &optional_size_type, .at = AT(pinned_max_cached_size),
		.unit = MiB, .unset = SIZE_MAX, .runtime_safe = true },
	/* Read when the first pinned block is made: alloc_settings.c. */
	[NPA_CONF_pinned_reserve_segment_size_mb] = {
		.type = &optional_size_type, .at = AT(pinned_reserve_segment_size),
		.unit = MiB, .unset = 0, .runtime_safe = true },
	[NPA_CONF_pin_memory_expandable_segments] = {
		.type = &flag_type, .at = AT(pin_memory_expandable_segments),
		.no = "False", .yes = "True" },
};

static const void *value_of(const struct npa_conf *c, const struct setting *s)
{
	return (const char *)c + s->at;
}

void conf_print_value(struct sbuf *out, const struct npa_conf *c,
		      enum npa_conf_key k)
{
	const struct setting *s = &settings[k];

	s->type->print(out, s, value_of(c, s));
}

bool conf_key_differs(const struct npa_conf *a, const struct npa_conf *b,
		      enum npa_conf_key k)
{
	const struct setting *s = &settings[k];

	return s->type->differs(value_of(a, s), value_of(b, s));
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

bool npa_conf_key_runtime_safe(enum npa_conf_key k)
{
	return (unsigned)k < NPA_CONF_NKEYS && settings[k].runtime_safe;
}
