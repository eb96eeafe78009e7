/*
 * snapshot_svg.c - memory_snapshot() as a picture: the segments largest
 * first, packed into rows at one scale (a scale bar says it), each labelled
 * by its size (a run of equal small ones once, "12 × 2 MiB"), each block
 * a box as wide as its bytes and coloured by its state. Every box carries its bytes (data-bytes) and a tooltip (title)
 * with its address, size and state, so a script can check the picture and
 * a browser can explain it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#include "svg.h"

#define WIDTH 1000    /* pixels of the largest segment, and of a row */
#define LEFT 10
#define TOP 50
#define LABEL_H 13    /* a row's labels, above its boxes */
#define BAR 18
#define ROW (LABEL_H + BAR + 7)
#define LABEL_MIN 56  /* a box this wide or wider is labelled with its size */
#define SEG_MIN 2.0   /* the narrowest a segment is drawn, so none vanishes */
#define SEG_GAP 2.0   /* between segments of one label */
#define ITEM_GAP 14.0 /* between labelled runs of a row */
#define CHAR_PX 6.5   /* a character of an 11 px sans-serif label, at most */

enum shade { ALLOCATED, PENDING_FREE, INACTIVE_SPLIT, FREE, NSHADES };

static const struct {
	const char *name, *color;
} shades[NSHADES] = {
	[ALLOCATED] = { "allocated", "#4c9a2a" },
	[PENDING_FREE] = { "pending free", "#e8a33d" },
	[INACTIVE_SPLIT] = { "inactive split", "#b7c4d6" },
	[FREE] = { "free", "#ffffff" },
};

/* An inactive block beside others is a split remainder; alone it is a
 * free segment, which empty_cache would give back. */
static enum shade shade_of(const struct npa_segment_info *seg, const struct npa_block_info *b)
{
	if (b->state == NPA_BLOCK_ACTIVE_ALLOCATED)
		return ALLOCATED;
	if (b->state == NPA_BLOCK_ACTIVE_PENDING_FREE)
		return PENDING_FREE;
	return seg->nblocks > 1 ? INACTIVE_SPLIT : FREE;
}

static double px(uint64_t bytes, uint64_t largest)
{
	return (double)bytes * WIDTH / (double)largest;
}

static void put_block(struct sbuf *out, const struct npa_segment_info *seg,
		      const struct npa_block_info *b, uint64_t largest, double left, int y)
{
	enum shade s = shade_of(seg, b);
	double x = left + px(b->address - seg->address, largest);
	double w = px(b->size, largest);
	char size[32];

	svg_size(size, sizeof(size), b->size);
	sbuf_printf(out,
		    "<rect class=\"block\" data-bytes=\"%" PRIu64 "\" data-state=\"%s\" "
		    "x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
		    "stroke=\"#333333\" stroke-width=\"0.5\"><title>0x%" PRIx64 ": %s (%" PRIu64
		    " bytes), %s</title></rect>\n",
		    b->size, shades[s].name, x, y, w < 0.5 ? 0.5 : w, BAR, shades[s].color,
		    b->address, size, b->size, shades[s].name);
	if (w >= LABEL_MIN)
		sbuf_printf(out, "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
			    x + w / 2, y + BAR / 2 + 4, size);
}

static void put_segment(struct sbuf *out, const struct npa_segment_info *seg,
			uint64_t largest, double x, int y)
{
	char size[32];

	svg_size(size, sizeof(size), seg->total_size);
	sbuf_printf(out,
		    "<g class=\"segment\" data-bytes=\"%" PRIu64 "\" data-address=\"%" PRIu64 "\">"
		    "<title>segment 0x%" PRIx64 ": %s, stream %" PRIu64 ", pool (%" PRIu64
		    ", %" PRIu64 ")%s</title>\n",
		    seg->total_size, seg->address, seg->address, size, seg->stream,
		    seg->pool_id[0], seg->pool_id[1], seg->is_expandable ? ", expandable" : "");
	for (size_t i = 0; i < seg->nblocks; i++)
		put_block(out, seg, &seg->blocks[i], largest, x, y);
	sbuf_puts(out, "</g>\n");
}

/* Largest first, so the segments that hold the most are on the first
 * screen; equal sizes by address. */
static int by_size(const void *a, const void *b)
{
	const struct npa_segment_info *x = *(const struct npa_segment_info *const *)a;
	const struct npa_segment_info *y = *(const struct npa_segment_info *const *)b;

	if (x->total_size != y->total_size)
		return x->total_size > y->total_size ? -1 : 1;
	return (x->address > y->address) - (x->address < y->address);
}

/* A run of segments of one size that fits one row, labelled once
 * ("12 × 2 MiB"): a segment too narrow for its own label is still named. */
struct item {
	size_t first, n;
	double seg_w, foot;
	char label[64];
};

static double seg_px(uint64_t bytes, uint64_t largest)
{
	double w = px(bytes, largest);
	return w < SEG_MIN ? SEG_MIN : w;
}

static void make_item(struct item *it, const struct npa_segment_info *const *order,
		      size_t first, size_t n, uint64_t largest)
{
	char size[32];
	double bar;

	it->first = first;
	it->seg_w = seg_px(order[first]->total_size, largest);
	it->n = 1;
	bar = it->seg_w;
	while (first + it->n < n && order[first + it->n]->total_size == order[first]->total_size &&
	       bar + SEG_GAP + it->seg_w <= WIDTH) {
		bar += SEG_GAP + it->seg_w;
		it->n++;
	}
	svg_size(size, sizeof(size), order[first]->total_size);
	if (it->n > 1)
		snprintf(it->label, sizeof(it->label), "%zu \xc3\x97 %s", it->n, size);
	else
		snprintf(it->label, sizeof(it->label), "%s", size);
	it->foot = bar > CHAR_PX * (double)strlen(it->label) ? bar : CHAR_PX * (double)strlen(it->label);
}

/* Items left to right, a new row when the next one would not fit. */
static void put_items(struct sbuf *out, const struct npa_segment_info *const *order, size_t n,
		      uint64_t largest, int *rows)
{
	double cursor = 0;
	int row = 0;

	for (size_t i = 0; i < n;) {
		struct item it;
		make_item(&it, order, i, n, largest);
		if (cursor > 0 && cursor + ITEM_GAP + it.foot > WIDTH) {
			row++;
			cursor = 0;
		}
		double x = LEFT + (cursor > 0 ? cursor + ITEM_GAP : 0);
		int y = TOP + row * ROW;
		sbuf_printf(out, "<g class=\"item\"><text class=\"label\" x=\"%.2f\" y=\"%d\">%s</text>\n",
			    x, y + LABEL_H - 3, it.label);
		for (size_t k = 0; k < it.n; k++)
			put_segment(out, order[i + k], largest, x + (double)k * (it.seg_w + SEG_GAP),
				    y + LABEL_H);
		sbuf_puts(out, "</g>\n");
		cursor = x - LEFT + it.foot;
		i += it.n;
	}
	*rows = n ? row + 1 : 0;
}

/* A bar of a power-of-two size, a quarter of the widest row at most. */
static void put_scale(struct sbuf *out, uint64_t largest)
{
	uint64_t bytes = 1;
	char size[32];

	while (bytes * 2 <= largest / 4)
		bytes *= 2;
	double w = px(bytes, largest), x1 = LEFT + WIDTH, x0 = x1 - w;
	svg_size(size, sizeof(size), bytes);
	sbuf_printf(out,
		    "<g class=\"scale\" data-bytes=\"%" PRIu64 "\">"
		    "<path d=\"M%.2f 34 V42 H%.2f V34\" fill=\"none\" stroke=\"#333333\"/>"
		    "<text x=\"%.2f\" y=\"38\" text-anchor=\"end\">%s</text></g>\n",
		    bytes, x0, x1, x0 - 6, size);
}

static void put_legend(struct sbuf *out, const struct npa_snapshot *snap)
{
	uint64_t reserved = 0;
	char size[32];

	for (size_t i = 0; i < snap->nsegments; i++)
		reserved += snap->segments[i].total_size;
	svg_size(size, sizeof(size), reserved);
	sbuf_printf(out, "<text x=\"%d\" y=\"18\" font-size=\"14\" text-anchor=\"end\">"
			 "%zu segment%s, %s reserved</text>\n",
		    LEFT + WIDTH, snap->nsegments, snap->nsegments == 1 ? "" : "s", size);
	for (int s = 0; s < NSHADES; s++)
		svg_swatch(out, LEFT + s * 130, 30, shades[s].color, shades[s].name);
}

int report_snapshot_svg(struct sbuf *out, const struct npa_snapshot *snap, int device)
{
	const struct npa_segment_info **order = calloc(snap->nsegments + 1, sizeof(*order));
	uint64_t largest = 1;
	char title[64];
	int rows;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < snap->nsegments; i++) {
		order[i] = &snap->segments[i];
		if (snap->segments[i].total_size > largest)
			largest = snap->segments[i].total_size;
	}
	qsort(order, snap->nsegments, sizeof(*order), by_size);
	/* The height needs the rows, which the layout makes: lay out once
	 * into a scratch buffer to count them. */
	struct sbuf body;

	sbuf_init(&body);
	put_items(&body, order, snap->nsegments, largest, &rows);
	snprintf(title, sizeof(title), "device %d: segments and blocks", device);
	svg_begin(out, LEFT * 2 + WIDTH, TOP + rows * ROW + 10, title);
	put_legend(out, snap);
	if (snap->nsegments)
		put_scale(out, largest);
	sbuf_append(out, body.data ? body.data : "", body.len);
	svg_end(out);
	int rc = body.error ? body.error : out->error;
	sbuf_release(&body);
	free(order);
	return rc;
}
