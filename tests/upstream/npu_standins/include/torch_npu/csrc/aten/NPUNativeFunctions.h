// Stand-in for torch_npu/csrc/aten/NPUNativeFunctions.h (generated from
// torch_npu's operator yaml): NPUStream.h includes it, the allocator uses
// none of it.
