/*
 * whatif_svg.h - npumem-whatif's picture: reserved bytes over the trace's
 * events, one line per setting, on one set of axes.
 */
#ifndef NPUMEMFS_WHATIF_SVG_H
#define NPUMEMFS_WHATIF_SVG_H

#include "base/sbuf.h"
#include "whatif_rows.h"

/* Every row that ran must carry its curve (whatif_env.curve_every); a
 * failed row is named in the legend, marked, and not drawn. */
void whatif_svg(struct sbuf *out, const struct whatif_result *rows, unsigned n);

/* Events a point, for about this many points over `nevents`. */
size_t whatif_svg_every(size_t nevents);

#endif /* NPUMEMFS_WHATIF_SVG_H */
