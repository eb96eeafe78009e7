/* fakecuda.h - what the differential driver asks of the fake device. */
#ifndef FAKECUDA_CONTROL_H
#define FAKECUDA_CONTROL_H

#include "driver_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Work on `stream` that ends only when the stream, the device or an event
 * recorded after it is synchronized (npusim_launch_open). */
void fakecuda_launch_open(cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* FAKECUDA_CONTROL_H */
