/*
 * size_parse.h - sizes as people write them: "4096", "64KiB", "20 MiB", "8GiB".
 */
#ifndef NPUMEMFS_SIZE_PARSE_H
#define NPUMEMFS_SIZE_PARSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parse a size: decimal digits, optionally followed by one of B, KiB, MiB,
 * GiB, TiB (case insensitive), with at most one space before the unit. No
 * sign, no overflow. K, M, G, T, KB, MB, GB, TB are refused (see
 * npa_size_ambiguous). Returns 0 or -EINVAL, *out untouched on error.
 */
int npa_parse_size(const char *s, uint64_t *out);

/*
 * For a size written with K, M, G, T, KB, MB, GB or TB: 1, and in `why`
 * the spelling to use instead ("use 32GiB (binary) or bytes; ..."). 0 for
 * anything else.
 */
int npa_size_ambiguous(const char *s, char *why, size_t len);

#endif /* NPUMEMFS_SIZE_PARSE_H */
