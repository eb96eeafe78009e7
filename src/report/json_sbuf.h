/*
 * json_sbuf.h - jansson values written into an sbuf.
 */
#ifndef NPUREPORT_JSON_SBUF_H
#define NPUREPORT_JSON_SBUF_H

#include <jansson.h>

#include "base/sbuf.h"

/* The layout every JSON file of the mount uses: 2-space indent, newline. */
#define REPORT_JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER)

/* Appends `j` and a newline to `out`; 0 or -ENOMEM. */
int json_to_sbuf(struct sbuf *out, const json_t *j, size_t flags);

#endif /* NPUREPORT_JSON_SBUF_H */
