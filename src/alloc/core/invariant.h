/*
 * invariant.h - how an invariant check reports the first rule it found
 * broken (npa_check, npa_host_check): the reason in err, -EFAULT.
 */
#ifndef NPA_INVARIANT_H
#define NPA_INVARIANT_H

#include <stddef.h>

/* The reason, formatted into err (may be NULL); always -EFAULT. */
__attribute__((format(printf, 3, 4)))
int npa_broken(char *err, size_t errlen, const char *fmt, ...);

#endif /* NPA_INVARIANT_H */
