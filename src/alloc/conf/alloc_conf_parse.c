/*
 * alloc_conf_parse.c - reading a PYTORCH_NPU_ALLOC_CONF /
 * PYTORCH_CUDA_ALLOC_CONF string into settings.
 *
 * The grammar is upstream's made strict: upstream's tokenizer lets some
 * malformed strings through half-parsed, this one refuses them whole, so a
 * bad write to ctl/alloc_conf never changes anything. torch_npu refuses
 * expandable segments with a split limit or gc.
 */
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "alloc_conf_impl.h"

/* ---- tokens (upstream ConfigTokenizer) ---- */

/* Separators are tokens of their own; blanks vanish, even inside a word. */
static void tokenize(const char *s, struct tokens *tk)
{
	char *w = tk->text;
	bool in_word = false;

	tk->n = 0;
	for (; *s; s++) {
		if (strchr(",:[]", *s)) {
			if (in_word)
				*w++ = '\0';
			in_word = false;
			tk->t[tk->n++] = w;
			*w++ = *s;
			*w++ = '\0';
		} else if (!isspace((unsigned char)*s)) {
			if (!in_word)
				tk->t[tk->n++] = w;
			in_word = true;
			*w++ = *s;
		}
	}
	if (in_word)
		*w = '\0';
}

/* ---- the string's shape ---- */

static int expect_value(struct parse *p, const struct keydef *kd)
{
	if (kd->key == NPA_CONF_page_size)
		return conf_fail(p, "page_size requires format 'page_size:1g'");
	return conf_fail(p, "Error, expecting %s value", kd->name);
}

/* Index of the ']' closing the list opened at `open`. */
static int list_end(struct parse *p, const struct keydef *kd, size_t open,
		    size_t *end)
{
	for (size_t i = open + 1; i < p->tk->n; i++) {
		if (strcmp(conf_tok(p, i), "]") == 0) {
			*end = i;
			return 0;
		}
		if (strcmp(conf_tok(p, i), "[") == 0)
			return conf_fail(p, "Error parsing CachingAllocator settings, unexpected '[' in %s",
				    kd->name);
	}
	return conf_fail(p, "Expected closing bracket ']' in ConfigTokenizer but reached end of config");
}

/* One "key:value" at token `i`. */
static int split_entry(struct parse *p, size_t i, struct entry *e)
{
	const struct tokens *tk = p->tk;
	struct echo echo;

	e->key = i;
	e->kd = conf_find_key(p->d, conf_tok(p, i));
	if (!e->kd)
		return conf_fail(p, p->d->unknown_key, conf_echo(&echo, conf_tok(p, i)));
	if (i + 1 >= tk->n)
		return expect_value(p, e->kd);
	if (strcmp(conf_tok(p, i + 1), ":"))
		return conf_fail(p, "Error parsing CachingAllocator settings, expected ':' after %s",
			    e->kd->name);
	e->val = i + 2;
	if (e->val >= tk->n || (conf_is_sep(conf_tok(p, e->val)) && strcmp(conf_tok(p, e->val), "[")))
		return expect_value(p, e->kd);
	e->end = e->val;
	if (strcmp(conf_tok(p, e->val), "[") == 0)
		return list_end(p, e->kd, e->val, &e->end);
	return 0;
}

/* Every key known, every value present, ',' between entries (one may end the string, as upstream allows). */
static int split_entries(struct parse *p, struct entry *ents, size_t *nents)
{
	const struct tokens *tk = p->tk;
	size_t i = 0, n = 0;
	struct echo echo;
	int rc;

	while (i < tk->n) {
		rc = split_entry(p, i, &ents[n]);
		if (rc)
			return rc;
		i = ents[n].end + 1;
		if (i < tk->n && strcmp(conf_tok(p, i), ","))
			return conf_fail(p, "Error parsing CachingAllocator settings, expected ',' after the value of %s, got '%s'",
					 ents[n].kd->name, conf_echo(&echo, conf_tok(p, i)));
		i++;
		n++;
	}
	*nents = n;
	return 0;
}

/* ---- parse ---- */

enum pass { PASS_LARGE_SEGMENT, PASS_COMMON, PASS_FLAVOR };

static enum pass pass_of(const struct keydef *kd)
{
	if (kd->key == NPA_CONF_large_segment_size_mb)
		return PASS_LARGE_SEGMENT;
	return kd->common ? PASS_COMMON : PASS_FLAVOR;
}

static int apply(struct parse *p, const struct entry *ents, size_t n,
		 enum pass pass, struct npa_conf *c)
{
	for (size_t i = 0; i < n; i++) {
		if (pass_of(ents[i].kd) != pass)
			continue;
		int rc = ents[i].kd->parse(p, &ents[i], c);
		if (rc)
			return rc;
	}
	return 0;
}

/* What AcceleratorAllocatorConfig::parseArgs does before reading a string. */
static void reset_common(struct npa_conf *c)
{
	c->max_split_size = SIZE_MAX;
	c->garbage_collection_threshold = 0.0;
	memset(c->roundup_power2_divisions, 0, sizeof(c->roundup_power2_divisions));
}

static void mark_origins(const struct npa_conf *old, struct npa_conf *c,
			 const struct entry *ents, size_t n,
			 enum npa_conf_origin origin)
{
	static const enum npa_conf_key reset[] = {
		NPA_CONF_max_split_size_mb, NPA_CONF_max_non_split_rounding_mb,
		NPA_CONF_garbage_collection_threshold,
		NPA_CONF_roundup_power2_divisions,
	};

	for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
		if (old->origin[reset[i]] != NPA_ORIGIN_DEFAULT ||
		    conf_key_differs(old, c, reset[i]))
			c->origin[reset[i]] = origin;
	for (size_t i = 0; i < n; i++)
		if (ents[i].kd->key != NO_EFFECT)
			c->origin[ents[i].kd->key] = origin;
}

static int parse_into(struct parse *p, struct npa_conf *c,
		      struct entry *ents, size_t *n)
{
	struct tokens tk;
	int rc;

	tokenize(p->str, &tk);
	p->tk = &tk;
	rc = split_entries(p, ents, n);
	if (!rc) {
		reset_common(c);
		rc = apply(p, ents, *n, PASS_LARGE_SEGMENT, c);
	}
	if (!rc) {
		/* max_non_split_rounding_mb may not be below the segment size. */
		c->max_non_split_rounding = c->large_segment_size;
		rc = apply(p, ents, *n, PASS_COMMON, c);
	}
	if (!rc)
		rc = apply(p, ents, *n, PASS_FLAVOR, c);
	if (!rc && p->d->expandable_excludes_split_gc && c->expandable_segments &&
	    (c->max_split_size != SIZE_MAX || c->garbage_collection_threshold != 0.0))
		rc = conf_fail(p, "`max_split_size_mb` or `garbage_collection_threshold`, cannot be enabled with "
			  "`expandable_segments`, please set `expandable_segments` to `False`.");
	p->tk = NULL;   /* tk dies here */
	return rc;
}

int npa_conf_parse(struct npa_conf *conf, const struct npa_flavor *flavor,
		   const char *str, enum npa_conf_origin origin, char *err,
		   size_t errlen)
{
	struct parse p = { conf_dialect_of(flavor), NULL, str ? str : "", err, errlen };
	struct entry ents[STR_MAX / 2];
	struct npa_conf c;
	size_t n = 0, len;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!conf || !str)
		return conf_fail(&p, "no settings given");
	len = strlen(str);
	if (len >= STR_MAX)
		return conf_fail(&p, "settings too long: %zu bytes, at most %zu", len,
			    STR_MAX - 1);
	if (len == 0 && p.d->empty_is_noop)
		return 0;
	c = *conf;
	rc = parse_into(&p, &c, ents, &n);
	if (rc)
		return rc;
	mark_origins(conf, &c, ents, n, origin);
	memcpy(c.last_string, str, len + 1);
	*conf = c;
	return 0;
}
