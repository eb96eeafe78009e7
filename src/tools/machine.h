/*
 * machine.h - the simulated NPU an ini describes, started by the programs
 * (npumemfs, npumem-replay) before anything uses the ACL API.
 */
#ifndef NPUMEMFS_MACHINE_H
#define NPUMEMFS_MACHINE_H

#include <stddef.h>

#include "config.h"

/* 0, or a negative errno with "cannot start the simulated NPU: ..." in err. */
int machine_start(const struct nmfs_config *cfg, char *err, size_t errlen);
void machine_stop(void);

#endif /* NPUMEMFS_MACHINE_H */
