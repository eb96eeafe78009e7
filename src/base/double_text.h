/*
 * double_text.h - a double as the shortest decimal text that reads back
 * as the same double.
 */
#ifndef NPUMEMFS_DOUBLE_TEXT_H
#define NPUMEMFS_DOUBLE_TEXT_H

/* Room for any double's text: sign, 17 digits, point, exponent, NUL. */
#define DOUBLE_TEXT_LEN 32

/*
 * The fewest significant digits (1 to 17, "%.*g") whose text strtod reads
 * back as `v` itself: 0.123456789 stays "0.123456789", 0.5 is "0.5".
 */
void double_text(char buf[DOUBLE_TEXT_LEN], double v);

#endif /* NPUMEMFS_DOUBLE_TEXT_H */
