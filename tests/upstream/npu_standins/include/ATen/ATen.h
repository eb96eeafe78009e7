// Stand-in for PyTorch's ATen/ATen.h: forward declarations of what
// torch_npu's allocator headers name (at::Tensor in declarations only).
// The build includes it first, as a full ATen would have been by then.
#pragma once
#include <c10/core/TensorImpl.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/Optional.h>
namespace c10 { template <class T> class List; }
namespace at { class Tensor; using TensorList = c10::ArrayRef<Tensor>; class ITensorListRef; }
