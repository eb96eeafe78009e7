/*
 * size_parse.h - sizes as people write them: "4096", "64KiB", "20MiB", "8GiB".
 */
#ifndef NPUMEMFS_SIZE_PARSE_H
#define NPUMEMFS_SIZE_PARSE_H

#include <stdint.h>

/*
 * Parse a size: decimal digits, optionally followed by one of B, KiB, MiB,
 * GiB, TiB (also K, M, G, T, KB, MB, GB, TB, all binary multiples, case
 * insensitive). No sign, no blanks, no overflow. Returns 0 or -EINVAL.
 */
int npa_parse_size(const char *s, uint64_t *out);

#endif /* NPUMEMFS_SIZE_PARSE_H */
