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

/*
 * A member NAME added as the last of the JSON object that ends `out`, for
 * a report that extends another's object without parsing it back: open
 * reopens the object and writes ",\n  \"NAME\": ", keeping what followed
 * its "}" in tail[len]; the caller appends the value, then close ends the
 * object again. With no object in `out`, open writes nothing.
 */
void json_open_last_member(struct sbuf *out, const char *name, char *tail, size_t len);
void json_close_last_member(struct sbuf *out, const char *tail);

#endif /* NPUREPORT_JSON_SBUF_H */
