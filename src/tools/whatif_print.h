/*
 * whatif_print.h - npumem-whatif's comparison as people and programs read
 * it: an aligned table with the best rows marked and one line of advice,
 * a JSON array, or CSV.
 */
#ifndef NPUMEMFS_WHATIF_PRINT_H
#define NPUMEMFS_WHATIF_PRINT_H

#include "base/sbuf.h"
#include "whatif_rows.h"

enum whatif_format { WHATIF_TABLE, WHATIF_JSON, WHATIF_CSV };

/* Mark the best rows: the least peak reserved among the rows with no
 * OOM, the least minimum capacity (the first row of a tie). */
void whatif_mark(struct whatif_result *rows, unsigned n);
int whatif_print(struct sbuf *out, const struct whatif_result *rows, unsigned n,
		 enum whatif_format format);

#endif /* NPUMEMFS_WHATIF_PRINT_H */
