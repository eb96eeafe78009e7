// upstream_pair.cpp - N cached-hit allocate+free pairs of one size through
// PyTorch's own c10::cuda::CUDACachingAllocator on fakecuda, after a
// warm-up: bench_pair's loop (tests/bench/bench_pair.c) with upstream's
// allocator, so that tests/bench/pair_instructions.sh can print the
// instructions of PyTorch's own pair beside ours.
//
//     upstream_pair N [SIZE]
//
// The pair is a DataPtr taken from allocate(SIZE) on the current stream and
// dropped, which frees it, as a tensor's storage is.
#include <c10/core/Allocator.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

#include <cstdio>
#include <cstdlib>
#include <string>

// Defined in CUDAFunctions.cpp for libtorch_cuda's CUDAHooks; no header.
namespace c10::cuda::_internal {
void setHasPrimaryContext(bool (*func)(c10::DeviceIndex));
}

namespace {

constexpr unsigned long kWarmup = 1000;

// Keeps the compiler from dropping a pair whose pointer nobody reads.
void escape(void* p) {
  asm volatile("" : : "g"(p) : "memory");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: upstream_pair N [SIZE]\n");
    return 2;
  }
  unsigned long n = std::stoul(argv[1]);
  size_t size = argc == 3 ? std::stoull(argv[2]) : 4096;
  // What libtorch_cuda's CUDAHooks registers at load time (upstream_replay.cpp).
  c10::cuda::_internal::setHasPrimaryContext([](c10::DeviceIndex) { return true; });
  c10::cuda::CUDACachingAllocator::init(1);
  c10::Allocator* a = c10::cuda::CUDACachingAllocator::get();
  for (unsigned long i = 0; i < kWarmup + n; i++) {
    c10::DataPtr p = a->allocate(size);
    escape(p.get());
  }
  std::printf("upstream: %lu pairs of %zu bytes\n", n, size);
  std::fflush(stdout);
  std::_Exit(0);
}
