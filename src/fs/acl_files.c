/*
 * acl_files.c - ACL allocators on streams: acl/allocators (what the
 * runtime has registered, and the workspace drawn through each),
 * ctl/acl_allocator (register the caching allocator or a loaded plug-in on
 * a stream, unregister) and ctl/op (operators with workspace).
 *
 * Streams are named as everywhere in the mount: stream=S is the S-th
 * stream the daemon took on the device (0 its default stream); and
 * runtime_stream=ID names a stream someone else made and registered an
 * ACL allocator on (a plug-in's own, as MindSpore registers one per
 * stream), by the runtime's id that acl/allocators shows.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/acl/acl_adapter.h"
#include "base/size_parse.h"
#include "workload/op_launch.h"

#include "ctl_args.h"
#include "daemon.h"
#include "nodes.h"

/* The daemon's number for a stream of `device`, or -1 for another's. */
static int stream_index(struct nmfs *d, int device, aclrtStream s)
{
	int found = -1;

	if (device < 0 || device >= d->device_count)
		return -1;
	pthread_mutex_lock(&d->streams.lock);
	for (int i = 0; i <= TREE_STREAMS && found < 0; i++)
		if (d->streams.stream[device][i] == s)
			found = i;
	pthread_mutex_unlock(&d->streams.lock);
	return found;
}

static void registration_line(struct nmfs *d, const struct op_registration *r,
			      struct sbuf *out)
{
	char owner[32], sname[12] = "-";
	int s = stream_index(d, r->device, r->stream);

	if (s >= 0)
		snprintf(sname, sizeof(sname), "%d", s);
	if (!acl_adapters_owner(d->acl, r->obj, owner, sizeof(owner)))
		snprintf(owner, sizeof(owner), "-");
	sbuf_printf(out, "%d %s %llu %p %p %s %s %s %s %s %llu %llu %llu %llu %llu\n",
		    r->device, sname, (unsigned long long)r->stream_id, r->desc, r->obj, owner,
		    r->alloc ? "yes" : "no", r->free ? "yes" : "no",
		    r->alloc_advise ? "yes" : "no", r->get_addr_from_block ? "yes" : "no",
		    (unsigned long long)r->counts.alloc_calls,
		    (unsigned long long)r->counts.free_calls,
		    (unsigned long long)r->counts.outstanding_blocks,
		    (unsigned long long)r->counts.outstanding_bytes,
		    (unsigned long long)r->counts.lost_blocks);
}

int show_acl_allocators(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	size_t max = 16, n;
	struct op_registration *regs = NULL;

	(void)t;
	for (;;) {
		free(regs);
		regs = calloc(max, sizeof(*regs));
		if (!regs)
			return -ENOMEM;
		n = op_registrations(d->ops, regs, max);
		if (n <= max)
			break;
		max = n;
	}
	sbuf_puts(out, "device stream runtime_stream descriptor object allocator alloc free "
		  "alloc_advise get_addr_from_block alloc_calls free_calls outstanding_blocks "
		  "outstanding_bytes lost_blocks\n");
	for (size_t i = 0; i < n; i++)
		registration_line(d, &regs[i], out);
	sbuf_printf(out, "fallback_workspace_allocations %llu\n",
		    (unsigned long long)op_fallback_allocs(d->ops));
	free(regs);
	return out->error;
}

/* The registration of runtime stream `id` (a stream the daemon did not
 * make, such as one a plug-in made in its init hook). */
static int runtime_stream(struct nmfs *d, int id, int *device, aclrtStream *stream,
			  char *err, size_t errlen)
{
	size_t max = 16, n;
	struct op_registration *regs = NULL;
	int rc = -ENOENT;

	for (;;) {
		free(regs);
		if (!(regs = calloc(max, sizeof(*regs))))
			return -ENOMEM;
		if ((n = op_registrations(d->ops, regs, max)) <= max)
			break;
		max = n;
	}
	for (size_t i = 0; i < n && rc; i++)
		if (regs[i].stream_id == (uint64_t)id && regs[i].device >= 0) {
			*stream = regs[i].stream;
			*device = regs[i].device;
			rc = 0;
		}
	free(regs);
	if (rc)
		snprintf(err, errlen, "no ACL allocator is registered on runtime stream %d "
			 "(acl/allocators lists those there are)", id);
	return rc;
}

/*
 * "stream=S" (the daemon's S-th stream, made if new) or "runtime_stream=ID"
 * (a registered stream of someone else's, its device its own), and
 * "device=D", among words[from..n).
 */
static int stream_of(struct nmfs *d, struct ctl_args *a, int from, int *device,
		     aclrtStream *stream, char *err, size_t errlen)
{
	int s = -1, rs = -1, dev = -1, rc = 0;

	for (int i = from; i < a->n && rc >= 0; i++) {
		const char *w = a->word[i];
		rc = ctl_int_option(w, "stream", TREE_STREAMS, &s, err, errlen);
		if (rc == 0)
			rc = ctl_int_option(w, "runtime_stream", INT_MAX, &rs, err, errlen);
		if (rc == 0)
			rc = ctl_int_option(w, "device", NPA_MAX_DEVICES - 1, &dev, err, errlen);
		if (rc == 0 && strncmp(w, "workspace=", 10) && strncmp(w, "ns=", 3)) {
			snprintf(err, errlen, "unexpected '%s'", w);
			return -EINVAL;
		}
	}
	if (rc < 0)
		return rc;
	if ((s < 0) == (rs < 0)) {
		snprintf(err, errlen, "%s stream=S (0..%d) or runtime_stream=ID",
			 s < 0 ? "no" : "both", TREE_STREAMS);
		return -EINVAL;
	}
	if (s >= 0) {
		*device = dev < 0 ? 0 : dev;
		return streams_get(&d->streams, *device, s, stream, err, errlen);
	}
	if ((rc = runtime_stream(d, rs, device, stream, err, errlen)) == 0 && dev >= 0 &&
	    dev != *device) {
		snprintf(err, errlen, "runtime stream %d is a stream of device %d, not %d", rs,
			 *device, dev);
		return -EINVAL;
	}
	return rc;
}

/* ctl_split wants "VERB NAME ...": words are split here the same way. */
static int split(const char *value, struct ctl_args *a, char *err, size_t errlen)
{
	char *w, *save = NULL;

	snprintf(a->buf, sizeof(a->buf), "%s", value);
	a->n = 0;
	for (w = strtok_r(a->buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (a->n == CTL_MAX_WORDS) {
			snprintf(err, errlen, "too many words in '%s'", value);
			return -EINVAL;
		}
		a->word[a->n++] = w;
	}
	if (a->n == 0) {
		snprintf(err, errlen, "empty command");
		return -EINVAL;
	}
	return 0;
}

int store_acl_allocator(struct nmfs *d, const struct target *t, const char *value,
			uid_t caller, char *err, size_t errlen)
{
	struct ctl_args a;
	aclrtStream stream;
	int device, rc = split(value, &a, err, errlen);

	(void)t, (void)caller;
	if (rc)
		return rc;
	bool reg = strcmp(a.word[0], "register") == 0 && a.n >= 3;
	if (!reg && strcmp(a.word[0], "unregister") != 0) {
		snprintf(err, errlen, "'%s' is not 'register ALLOCATOR stream=S [device=D]' "
			 "or 'unregister stream=S [device=D]' (or runtime_stream=ID for "
			 "stream=S)", value);
		return -EINVAL;
	}
	if ((rc = stream_of(d, &a, reg ? 2 : 1, &device, &stream, err, errlen)))
		return rc;
	rc = reg ? acl_adapters_register(d->acl, a.word[1], device, stream, err, errlen)
		 : acl_adapters_unregister(d->acl, stream, err, errlen);
	if (rc == 0)
		dlog_printf(&d->log, "acl_allocator: %s", value);
	return rc;
}

static int parse_u64_option(struct ctl_args *a, const char *key, uint64_t *out, char *err,
			    size_t errlen)
{
	size_t k = strlen(key);

	for (int i = 1; i < a->n; i++) {
		if (strncmp(a->word[i], key, k) || a->word[i][k] != '=')
			continue;
		const char *v = a->word[i] + k + 1;
		char why[160];
		if (npa_parse_size(v, out) == 0)
			return 1;
		if (npa_size_ambiguous(v, why, sizeof(why)))
			snprintf(err, errlen, "'%s': %s", a->word[i], why);
		else
			snprintf(err, errlen, "'%s': %s is a size in bytes (or KiB, MiB, GiB, "
				 "TiB)", a->word[i], key);
		return -EINVAL;
	}
	return 0;
}

int store_op(struct nmfs *d, const struct target *t, const char *value, uid_t caller,
	     char *err, size_t errlen)
{
	struct ctl_args a;
	aclrtStream stream;
	uint64_t workspace = 0, ns = OP_OPEN_ENDED;
	int device, rc = split(value, &a, err, errlen);

	(void)t, (void)caller;
	if (rc)
		return rc;
	bool launch = strcmp(a.word[0], "launch") == 0;
	if (!launch && strcmp(a.word[0], "sync") != 0) {
		snprintf(err, errlen, "'%s' is not 'launch stream=S workspace=SIZE [ns=N] "
			 "[device=D]' or 'sync stream=S [device=D]' (or runtime_stream=ID for "
			 "stream=S)", value);
		return -EINVAL;
	}
	if (launch && (rc = parse_u64_option(&a, "workspace", &workspace, err, errlen)) <= 0) {
		if (rc == 0)
			snprintf(err, errlen, "no workspace=SIZE in '%s'", value);
		return rc ? rc : -EINVAL;
	}
	if (launch && (rc = parse_u64_option(&a, "ns", &ns, err, errlen)) < 0)
		return rc;
	if ((rc = stream_of(d, &a, 1, &device, &stream, err, errlen)))
		return rc;
	if (launch) {
		rc = op_launch(d->ops, device, stream, workspace, ns, err, errlen);
	} else {
		aclError e = aclrtSetDevice(device);
		if (e == ACL_SUCCESS)
			e = aclrtSynchronizeStream(stream);
		if (e != ACL_SUCCESS) {
			char name[64];
			snprintf(err, errlen, "aclrtSynchronizeStream: %s",
				 acl_error_name(e, name, sizeof(name)));
			return -EIO;
		}
		op_reap(d->ops);
	}
	if (rc == 0)
		dlog_printf(&d->log, "op: %s", value);
	return rc;
}
