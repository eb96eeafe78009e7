/*
 * trace_parse_ops.c - launch_op lines: an operator with workspace on a
 * stream, as ctl/op launches one.
 *
 *     launch_op STREAM SIZE [ns=N] [device=D]
 *
 * SIZE is the workspace in bytes (or KiB, MiB, GiB; 0: none); N the
 * operator's virtual nanoseconds; without ns= its work lasts until its
 * stream (or every stream) is synchronized by a sync line.
 */
#include <errno.h>
#include <stdlib.h>

#include "trace_parse_impl.h"

/* The duration's slot in t->op_ns. */
static int add_duration(struct parser *p, uint64_t ns, uint32_t *slot)
{
	struct wl_trace *t = p->t;

	if (t->nops == UINT32_MAX)
		return wl_parse_bad(p, "too many launch_op lines");
	if (wl_parse_grow((void **)&t->op_ns, &p->op_cap, t->nops, sizeof(*t->op_ns), 64))
		return -ENOMEM;
	*slot = t->nops;
	t->op_ns[t->nops++] = ns;
	return 0;
}

int wl_parse_launch_op(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct options o;
	int rc = wl_parse_check_fields(p, f, nf, 3, 3 + 2,
				       nf < 2 ? "STREAM SIZE" : "SIZE");

	if (rc == 0)
		rc = wl_parse_stream(p, f[1], &ev->stream);
	if (rc == 0)
		rc = wl_parse_size(p, f[2], "workspace size", &ev->size);
	if (rc == 0)
		rc = wl_parse_options(p, f + 3, nf - 3, OPT_NS | OPT_DEVICE, &o);
	if (rc)
		return rc;
	ev->device = (int16_t)(o.device < 0 ? 0 : o.device);
	return add_duration(p, o.ns == UINT64_MAX ? WL_OPEN_ENDED : o.ns, &ev->slot);
}
