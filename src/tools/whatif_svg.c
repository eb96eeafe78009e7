/*
 * whatif_svg.c - reserved bytes per setting over the events (whatif_svg.h).
 */
#include <stdio.h>

#include "report/svg.h"
#include "whatif_svg.h"

#define WIDTH 960
#define PLOT_X 80
#define PLOT_Y 40
#define PLOT_W (WIDTH - PLOT_X - 20)
#define PLOT_H 320
#define LEGEND_ROW 18
/* A point each few pixels is as fine as a line can show. */
#define POINTS (PLOT_W / 2)

static const char *const colors[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};
#define NCOLORS (sizeof(colors) / sizeof(colors[0]))

size_t whatif_svg_every(size_t nevents)
{
	size_t every = (nevents + POINTS - 1) / POINTS;

	return every ? every : 1;
}

static void escaped(struct sbuf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '&')
			sbuf_puts(out, "&amp;");
		else if (*s == '<')
			sbuf_puts(out, "&lt;");
		else if (*s == '>')
			sbuf_puts(out, "&gt;");
		else if (*s == '"')
			sbuf_puts(out, "&quot;");
		else
			sbuf_append(out, s, 1);
	}
}

static void axes(struct sbuf *out, uint64_t top, size_t events)
{
	char size[32];

	svg_size(size, sizeof(size), top);
	sbuf_printf(out, "<path d=\"M%d %d V%d H%d\" fill=\"none\" stroke=\"#000000\"/>\n",
		    PLOT_X, PLOT_Y, PLOT_Y + PLOT_H, PLOT_X + PLOT_W);
	sbuf_printf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n",
		    PLOT_X - 4, PLOT_Y + 4, size);
	sbuf_printf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n",
		    PLOT_X - 4, PLOT_Y + PLOT_H);
	sbuf_printf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%zu events</text>\n",
		    PLOT_X + PLOT_W, PLOT_Y + PLOT_H + 16, events);
}

static void curve(struct sbuf *out, const struct wl_whatif_curve *c, uint64_t top,
		  size_t events, const char *color)
{
	sbuf_printf(out, "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"%s\" points=\"",
		    color);
	for (size_t k = 0; k < c->npoints; k++) {
		size_t at = k * c->every < events ? k * c->every : events;
		double x = PLOT_X + (double)PLOT_W * (double)at / (double)events;
		double y = PLOT_Y + PLOT_H - (double)PLOT_H * (double)c->points[k] / (double)top;
		sbuf_printf(out, "%s%.1f,%.1f", k ? " " : "", x, y);
	}
	sbuf_puts(out, "\"/>\n");
}

/* A failed row has no curve: an empty swatch says so, and its reason
 * shows when pointed at (it is the table's too). */
static void legend(struct sbuf *out, const struct whatif_result *r, int y, const char *color)
{
	struct sbuf label;

	sbuf_init(&label);
	if (r->plugin)
		sbuf_puts(&label, "plugin ");
	escaped(&label, r->settings[0] || r->plugin ? r->settings : "(defaults)");
	if (r->failed) {
		sbuf_puts(&label, " (failed, not drawn)");
		sbuf_puts(out, "<g class=\"failed\"><title>");
		escaped(out, r->failure);
		sbuf_puts(out, "</title>");
	}
	svg_swatch(out, PLOT_X, y, r->failed ? "none" : color, label.data ? label.data : "");
	if (r->failed)
		sbuf_puts(out, "</g>\n");
	sbuf_release(&label);
}

void whatif_svg(struct sbuf *out, const struct whatif_result *rows, unsigned n)
{
	uint64_t top = 1;
	size_t events = 1;

	for (unsigned i = 0; i < n; i++) {
		const struct wl_whatif_curve *c = &rows[i].curve;
		if (rows[i].m.events > events)
			events = rows[i].m.events;
		for (size_t k = 0; k < c->npoints; k++)
			top = c->points[k] > top ? c->points[k] : top;
	}
	svg_begin(out, WIDTH, PLOT_Y + PLOT_H + 40 + (int)n * LEGEND_ROW,
		  "Reserved bytes over the trace, per setting");
	axes(out, top, events);
	for (unsigned i = 0; i < n; i++) {
		if (!rows[i].failed)
			curve(out, &rows[i].curve, top, events, colors[i % NCOLORS]);
		legend(out, &rows[i], PLOT_Y + PLOT_H + 30 + (int)i * LEGEND_ROW,
		       colors[i % NCOLORS]);
	}
	svg_end(out);
}
