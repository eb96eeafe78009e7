/* cuda_runtime.h - fakecuda: the runtime API is all c10/cuda needs. */
#ifndef FAKECUDA_RUNTIME_H
#define FAKECUDA_RUNTIME_H
#include "cuda_runtime_api.h"
#endif
