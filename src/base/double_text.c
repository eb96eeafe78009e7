/*
 * double_text.c - a double as the shortest decimal text that reads back
 * as the same double.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/double_text.h"

/* 17 significant digits always read back, so the loop stops there. */
void double_text(char buf[DOUBLE_TEXT_LEN], double v)
{
	for (int digits = 1; digits < 17; digits++) {
		snprintf(buf, DOUBLE_TEXT_LEN, "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, DOUBLE_TEXT_LEN, "%.17g", v);
}
