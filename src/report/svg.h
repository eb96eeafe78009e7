/*
 * svg.h - what the SVG pictures share: the document frame, escaping and
 * sizes written for people.
 */
#ifndef NPUMEMFS_SVG_H
#define NPUMEMFS_SVG_H

#include <stdint.h>

#include "base/sbuf.h"

/* The XML declaration and an <svg> of w x h pixels with a white ground. */
void svg_begin(struct sbuf *out, int w, int h, const char *title);
void svg_end(struct sbuf *out);
/* "512 B", "1.5 KiB", "20 MiB", "1.7 GiB": binary units, 3 figures. */
void svg_size(char *buf, size_t len, uint64_t bytes);
/* A legend entry: a swatch of `color` and its label at (x, y). */
void svg_swatch(struct sbuf *out, int x, int y, const char *color, const char *label);

#endif /* NPUMEMFS_SVG_H */
