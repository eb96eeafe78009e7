/*
 * history_svg.c - allocated, active and reserved bytes over time, as the
 * lines of a chart a browser shows.
 */
#include <inttypes.h>
#include <stdio.h>

#include "report.h"

#include "svg.h"

#define W 900
#define H 320
#define LEFT 80
#define RIGHT 20
#define TOP 50
#define BOTTOM 40
#define GRID 4   /* horizontal lines above 0 */

static const struct {
	const char *name, *color;
	size_t offset;
} series[] = {
	{ "reserved", "#3b6fb6", offsetof(struct report_sample, reserved) },
	{ "active", "#e8a33d", offsetof(struct report_sample, active) },
	{ "allocated", "#4c9a2a", offsetof(struct report_sample, allocated) },
};
#define NSERIES (sizeof(series) / sizeof(series[0]))

static int64_t value(const struct report_sample *s, size_t k)
{
	return *(const int64_t *)((const char *)s + series[k].offset);
}

struct frame {
	int64_t t0, t1;   /* first and last reading */
	int64_t top;      /* bytes at the top line */
};

static double xof(const struct frame *f, int64_t t)
{
	double span = (double)(f->t1 - f->t0);
	return LEFT + (span > 0 ? (double)(t - f->t0) / span : 1.0) * (W - LEFT - RIGHT);
}

static double yof(const struct frame *f, int64_t v)
{
	return TOP + (H - TOP - BOTTOM) * (1.0 - (double)v / (double)f->top);
}

/* Ticks back from now at a round step, about six over the span: a reader
 * sees when each change happened, not only the span's two ends. */
static void put_time_ticks(struct sbuf *out, const struct frame *f)
{
	static const int64_t steps_ms[] = { 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000 };
	int64_t span = f->t1 - f->t0, step = steps_ms[0];

	for (size_t i = 0; i < sizeof(steps_ms) / sizeof(steps_ms[0]) && span / step > 6; i++)
		step = steps_ms[i];
	for (int64_t back = 0; f->t1 - back >= f->t0; back += step) {
		double x = xof(f, f->t1 - back);
		char label[32];
		if (back == 0)
			snprintf(label, sizeof(label), "now");
		else
			snprintf(label, sizeof(label), "%s%g s", "\xe2\x88\x92", (double)back / 1000.0);
		sbuf_printf(out,
			    "<g class=\"tick\" data-ms=\"%" PRId64 "\"><line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
			    "y2=\"%d\" stroke=\"#999999\"/><text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%s</text></g>\n",
			    -back, x, H - BOTTOM, x, H - BOTTOM + 5, x, H - BOTTOM + 18,
			    back == 0 ? "end" : "middle", label);
		if (span <= 0)
			break;
	}
}

static void put_axes(struct sbuf *out, const struct frame *f)
{
	char label[32];

	for (int i = 0; i <= GRID; i++) {
		int64_t v = f->top / GRID * i;
		double y = yof(f, v);
		svg_size(label, sizeof(label), (uint64_t)v);
		sbuf_printf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#dddddd\"/>"
				 "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			    LEFT, y, W - RIGHT, y, LEFT - 6, y + 4, label);
	}
	put_time_ticks(out, f);
}

/* A step line: each reading holds until the next. */
static void put_series(struct sbuf *out, const struct frame *f,
		       const struct report_sample *s, size_t n, size_t k)
{
	sbuf_printf(out, "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
		    series[k].name, series[k].color);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			sbuf_printf(out, "%.1f,%.1f ", xof(f, s[i].time_ms), yof(f, value(&s[i - 1], k)));
		sbuf_printf(out, "%.1f,%.1f ", xof(f, s[i].time_ms), yof(f, value(&s[i], k)));
	}
	sbuf_puts(out, "\"/>\n");
}

static void put_legend(struct sbuf *out, const struct report_sample *last)
{
	char label[64], size[32];

	for (size_t k = 0; k < NSERIES; k++) {
		svg_size(size, sizeof(size), last ? (uint64_t)value(last, k) : 0);
		snprintf(label, sizeof(label), "%s %s", series[k].name, size);
		svg_swatch(out, LEFT + (int)k * 180, 28, series[k].color, label);
	}
}

int report_history_svg(struct sbuf *out, const struct report_sample *s, size_t n,
		       int device)
{
	struct frame f = { n ? s[0].time_ms : 0, n ? s[n - 1].time_ms : 0, 1 };
	char title[64];

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < NSERIES; k++)
			f.top = value(&s[i], k) > f.top ? value(&s[i], k) : f.top;
	/* A round top: the next multiple of GRID MiB. */
	int64_t step = (int64_t)GRID << 20;
	f.top = (f.top + step - 1) / step * step;
	snprintf(title, sizeof(title), "device %d: memory over the last readings", device);
	svg_begin(out, W, H, title);
	put_legend(out, n ? &s[n - 1] : NULL);
	put_axes(out, &f);
	for (size_t k = 0; k < NSERIES; k++)
		put_series(out, &f, s, n, k);
	svg_end(out);
	return out->error;
}
