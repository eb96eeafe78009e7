/*
 * size_bins.h - one stream's free blocks in a pool, in bins of sizes.
 *
 * A pool orders its free blocks by (stream, size, address), as upstream's
 * BlockPool::blocks, and best fit is the lower bound of (stream, size, 0).
 * Here every stream of a pool has bins: a bin for each 512-byte size below
 * 1 MiB (kSmallSize, the largest small request), 32 bins for each power of
 * two above. A bin is a tree ordered by (size, address), and a bitmap
 * (with a word saying which of its words are not zero) names the bins
 * that hold blocks. The lower bound is then the lower bound inside one
 * bin's tree, or the first block of the next bin the bitmap names; putting
 * a block in or taking it out touches one bin's tree. A bin holds few
 * blocks, so none of this descends through every free block of the pool,
 * as one tree of them all did.
 *
 * A stream's bins live while the pool has a segment of that stream: they
 * are made with its first segment, where running out of memory fails the
 * allocation cleanly, so a block going into the pool never allocates.
 */
#ifndef NPA_SIZE_BINS_H
#define NPA_SIZE_BINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bsd/sys/tree.h>

#include <acl/acl_rt.h>

struct npa_block;

#define NPA_BIN_EXACT 2048u       /* sizes under 2048 * 512 bytes: a bin each */
#define NPA_BIN_PER_OCTAVE 32u    /* above: bins per power of two */
/* The powers of two from 2^11 * 512 (1 MiB) to that of SIZE_MAX (2^54 * 512). */
#define NPA_BINS (NPA_BIN_EXACT + (54u - 11u + 1u) * NPA_BIN_PER_OCTAVE)
#define NPA_BIN_WORDS (NPA_BINS / 64u)

RB_HEAD(npa_bin_tree, npa_block);

struct npa_stream_bins {
	aclrtStream stream;
	size_t segments;          /* of this stream in the pool: the bins live while any does */
	uint64_t summary;         /* bit w: map[w] is not zero */
	uint64_t map[NPA_BIN_WORDS]; /* bit i: bin[i] holds blocks */
	struct npa_bin_tree bin[NPA_BINS];
};

/* Whether key (size_a, ptr_a) sorts strictly before (size_b, ptr_b) in a
 * bin: upstream's BlockComparatorSize within one stream. */
static inline bool npa_bin_key_before(size_t size_a, const char *ptr_a, size_t size_b,
				      const char *ptr_b)
{
	return size_a != size_b ? size_a < size_b : ptr_a < ptr_b;
}

/* The bin of a block of `size` bytes; larger sizes never have a smaller bin. */
static inline unsigned npa_bin_of(size_t size)
{
	uint64_t u = (uint64_t)size >> 9;

	if (u < NPA_BIN_EXACT)
		return (unsigned)u;
	unsigned m = 63u - (unsigned)__builtin_clzll(u); /* 11 or more */
	return NPA_BIN_EXACT + (m - 11u) * NPA_BIN_PER_OCTAVE +
	       (unsigned)((u >> (m - 5u)) & (NPA_BIN_PER_OCTAVE - 1u));
}

static inline void npa_bins_mark(struct npa_stream_bins *sb, unsigned i)
{
	sb->map[i / 64] |= UINT64_C(1) << (i % 64);
	sb->summary |= UINT64_C(1) << (i / 64);
}

static inline void npa_bins_unmark(struct npa_stream_bins *sb, unsigned i)
{
	sb->map[i / 64] &= ~(UINT64_C(1) << (i % 64));
	if (sb->map[i / 64] == 0)
		sb->summary &= ~(UINT64_C(1) << (i / 64));
}

/* The first bin from `i` on that holds blocks, or NPA_BINS. */
static inline unsigned npa_bins_next(const struct npa_stream_bins *sb, unsigned i)
{
	if (i >= NPA_BINS)
		return NPA_BINS;
	unsigned w = i / 64;
	uint64_t m = sb->map[w] & (~UINT64_C(0) << (i % 64));

	if (m != 0)
		return w * 64 + (unsigned)__builtin_ctzll(m);
	uint64_t s = sb->summary & (~UINT64_C(0) << w << 1);
	if (s == 0)
		return NPA_BINS;
	w = (unsigned)__builtin_ctzll(s);
	return w * 64 + (unsigned)__builtin_ctzll(sb->map[w]);
}

/* The last bin before `i` that holds blocks, or NPA_BINS. */
static inline unsigned npa_bins_prev(const struct npa_stream_bins *sb, unsigned i)
{
	if (i == 0)
		return NPA_BINS;
	i--;
	unsigned w = i / 64;
	uint64_t m = sb->map[w] & (~UINT64_C(0) >> (63 - i % 64));

	if (m != 0)
		return w * 64 + 63u - (unsigned)__builtin_clzll(m);
	uint64_t s = sb->summary & ((UINT64_C(1) << w) - 1);
	if (s == 0)
		return NPA_BINS;
	w = 63u - (unsigned)__builtin_clzll(s);
	return w * 64 + 63u - (unsigned)__builtin_clzll(sb->map[w]);
}

#endif /* NPA_SIZE_BINS_H */
