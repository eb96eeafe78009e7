/*
 * snapshot_svg.c - memory_snapshot() as a picture: one row a segment, all
 * at one scale, each block a box as wide as its bytes and coloured by its
 * state. Every box carries its bytes (data-bytes) and a tooltip (title)
 * with its address, size and state, so a script can check the picture and
 * a browser can explain it.
 */
#include <inttypes.h>
#include <stdio.h>

#include "report.h"

#include "svg.h"

#define WIDTH 1000    /* pixels of the largest segment */
#define LEFT 10
#define TOP 56
#define ROW 26
#define BAR 20
#define LABEL_MIN 56  /* a box this wide or wider is labelled with its size */

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
		      const struct npa_block_info *b, uint64_t largest, int y)
{
	enum shade s = shade_of(seg, b);
	double x = LEFT + px(b->address - seg->address, largest);
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
			    x + w / 2, y + 14, size);
}

static void put_segment(struct sbuf *out, const struct npa_segment_info *seg,
			uint64_t largest, int y)
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
		put_block(out, seg, &seg->blocks[i], largest, y);
	sbuf_puts(out, "</g>\n");
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
	uint64_t largest = 1;
	char title[64];

	for (size_t i = 0; i < snap->nsegments; i++)
		if (snap->segments[i].total_size > largest)
			largest = snap->segments[i].total_size;
	snprintf(title, sizeof(title), "device %d: segments and blocks", device);
	svg_begin(out, LEFT * 2 + WIDTH, TOP + (int)snap->nsegments * ROW + 10, title);
	put_legend(out, snap);
	for (size_t i = 0; i < snap->nsegments; i++)
		put_segment(out, &snap->segments[i], largest, TOP + (int)i * ROW);
	svg_end(out);
	return out->error;
}
