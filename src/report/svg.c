/*
 * svg.c - the frame and pieces every SVG picture uses.
 */
#include <stdio.h>

#include "svg.h"

void svg_begin(struct sbuf *out, int w, int h, const char *title)
{
	sbuf_printf(out,
		    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		    "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n"
		    "<title>%s</title>\n"
		    "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n"
		    "<text x=\"10\" y=\"18\" font-size=\"14\">%s</text>\n",
		    w, h, w, h, title, w, h, title);
}

void svg_end(struct sbuf *out)
{
	sbuf_puts(out, "</svg>\n");
}

void svg_size(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0 || v >= 100 || v == (double)(uint64_t)v)
		snprintf(buf, len, "%.0f %s", v, units[u]);
	else
		snprintf(buf, len, "%.*f %s", v >= 10 ? 1 : 2, v, units[u]);
}

void svg_swatch(struct sbuf *out, int x, int y, const char *color, const char *label)
{
	sbuf_printf(out,
		    "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\" stroke=\"#555555\"/>"
		    "<text x=\"%d\" y=\"%d\">%s</text>\n",
		    x, y, color, x + 16, y + 10, label);
}
