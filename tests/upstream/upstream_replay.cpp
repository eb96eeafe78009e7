// upstream_replay.cpp - replay an npumemfs trace through PyTorch's own
// c10::cuda::CUDACachingAllocator (built unmodified from Debian's source
// of PyTorch) on fakecuda, and print memory_stats() as torch.cuda does:
// "key value" lines sorted by key, as `npumem-replay --format stats`.
//
//     upstream_replay TRACE
//
// PYTORCH_CUDA_ALLOC_CONF and FAKECUDA_CAPACITY come from the environment
// (c10 reads the first in a static initializer). The trace is driven as
// npumem-replay drives it (src/workload/replay.c): stream S >= 1 is the
// S-th getStreamFromPool() of this fresh process; a free launches open
// work on each stream its ID was record_stream'ed to, so its events wait
// for the next sync (or a complete line); an OOM leaves the ID
// unallocated. Device 0 only; graph and mempool lines are refused.
#include <c10/core/Allocator.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <cuda_runtime_api.h>
#include <fakecuda.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

// Defined in CUDAFunctions.cpp for libtorch_cuda's CUDAHooks; no header.
namespace c10::cuda::_internal {
void setHasPrimaryContext(bool (*func)(c10::DeviceIndex));
}

namespace {

namespace alloc = c10::cuda::CUDACachingAllocator;

struct Live {
  c10::DataPtr ptr;
  bool oomed = false;
  std::vector<long> uses;           // streams record_stream'ed since alloc
  std::vector<cudaEvent_t> done;    // recorded at its free, for complete
};

struct Replay {
  std::vector<c10::cuda::CUDAStream> pool;  // pool[S - 1] is trace stream S
  std::unordered_map<std::string, Live> ids;
  long line = 0;

  c10::cuda::CUDAStream stream(long s) {
    if (s == 0)
      return c10::cuda::getDefaultCUDAStream(0);
    while (static_cast<long>(pool.size()) < s)
      pool.push_back(c10::cuda::getStreamFromPool(false, 0));
    return pool[s - 1];
  }

  [[noreturn]] void bad(const std::string& why) {
    std::cerr << "upstream_replay: line " << line << ": " << why << "\n";
    std::exit(2);
  }

  void alloc(const std::string& id, size_t size, long s) {
    c10::cuda::setCurrentCUDAStream(stream(s));
    Live& l = ids[id];
    l = Live{};
    try {
      l.ptr = alloc::get()->allocate(size);
    } catch (const c10::OutOfMemoryError&) {
      l.oomed = true;
    }
  }

  void free(const std::string& id) {
    auto it = ids.find(id);
    if (it == ids.end())
      bad("free of unknown id " + id);
    Live& l = it->second;
    if (!l.oomed && l.ptr.get() != nullptr) {
      for (cudaEvent_t e : l.done)
        cudaEventDestroy(e);
      l.done.clear();
      for (long s : l.uses) {
        cudaStream_t cs = stream(s).stream();
        fakecuda_launch_open(cs);
        cudaEvent_t e;
        cudaEventCreate(&e);
        cudaEventRecord(e, cs);
        l.done.push_back(e);
      }
    }
    l.ptr.clear();
    l.uses.clear();
  }

  void record_stream(const std::string& id, long s) {
    auto it = ids.find(id);
    if (it == ids.end())
      bad("record_stream of unknown id " + id);
    if (it->second.oomed || it->second.ptr.get() == nullptr)
      return;
    it->second.uses.push_back(s);
    alloc::recordStream(it->second.ptr, stream(s));
  }

  void complete(const std::string& id) {
    Live& l = ids[id];
    for (cudaEvent_t e : l.done) {
      cudaEventSynchronize(e);
      cudaEventDestroy(e);
    }
    l.done.clear();
  }

  void sync(const std::string& s) {
    if (s.empty())
      cudaDeviceSynchronize();
    else
      cudaStreamSynchronize(stream(std::stol(s)).stream());
  }
};

long option(const std::string& field, const char* key) {
  std::string k = std::string(key) + "=";
  if (field.compare(0, k.size(), k) != 0)
    return -1;
  return std::stol(field.substr(k.size()));
}

void run_line(Replay& r, const std::string& text) {
  std::istringstream in(text.substr(0, text.find('#')));
  std::vector<std::string> f;
  for (std::string w; in >> w;)
    f.push_back(w);
  if (f.empty())
    return;
  const std::string& cmd = f[0];
  if (cmd == "alloc") {
    long s = 0;
    for (size_t i = 3; i < f.size(); i++) {
      if (option(f[i], "stream") >= 0)
        s = option(f[i], "stream");
      else if (option(f[i], "device") > 0)
        r.bad("only device 0");
    }
    r.alloc(f.at(1), std::stoull(f.at(2)), s);
  } else if (cmd == "free") {
    r.free(f.at(1));
  } else if (cmd == "record_stream") {
    r.record_stream(f.at(1), std::stol(f.at(2)));
  } else if (cmd == "complete") {
    r.complete(f.at(1));
  } else if (cmd == "sync") {
    r.sync(f.size() > 1 ? f[1] : "");
  } else if (cmd == "empty_cache") {
    alloc::emptyCache();
  } else if (cmd == "reset_peak") {
    alloc::resetPeakStats(0);
  } else if (cmd == "reset_accumulated") {
    alloc::resetAccumulatedStats(0);
  } else if (cmd == "fraction") {
    alloc::setMemoryFraction(std::stod(f.at(1)), 0);
  } else {
    r.bad("unsupported line: " + text);
  }
}

// torch/csrc/cuda/Module.cpp memoryStats, flattened as torch.cuda.memory_stats.
void print_stats() {
  const auto st = alloc::getDeviceStats(0);
  std::map<std::string, int64_t> out;
  const char* pools[] = {"all", "small_pool", "large_pool"};
  auto stat = [&](const std::string& name, const c10::CachingDeviceAllocator::Stat& s) {
    out[name + ".current"] = s.current;
    out[name + ".peak"] = s.peak;
    out[name + ".allocated"] = s.allocated;
    out[name + ".freed"] = s.freed;
  };
  auto array = [&](const char* name, const c10::CachingDeviceAllocator::StatArray& a) {
    for (int i = 0; i < 3; i++)
      stat(std::string(name) + "." + pools[i], a[i]);
  };
  array("allocation", st.allocation);
  array("segment", st.segment);
  array("active", st.active);
  array("inactive_split", st.inactive_split);
  array("allocated_bytes", st.allocated_bytes);
  array("reserved_bytes", st.reserved_bytes);
  array("active_bytes", st.active_bytes);
  array("inactive_split_bytes", st.inactive_split_bytes);
  array("requested_bytes", st.requested_bytes);
  out["num_alloc_retries"] = st.num_alloc_retries;
  out["num_ooms"] = st.num_ooms;
  stat("oversize_allocations", st.oversize_allocations);
  stat("oversize_segments", st.oversize_segments);
  out["num_sync_all_streams"] = st.num_sync_all_streams;
  out["num_device_alloc"] = st.num_device_alloc;
  out["num_device_free"] = st.num_device_free;
  out["max_split_size"] = st.max_split_size;
  for (const auto& [k, v] : out)
    std::cout << k << " " << v << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: upstream_replay TRACE\n";
    return 2;
  }
  std::ifstream trace(argv[1]);
  if (!trace) {
    std::cerr << "upstream_replay: cannot read " << argv[1] << "\n";
    return 2;
  }
  // What libtorch_cuda's CUDAHooks registers at load time: the device's
  // context exists (insert_events' MaybeSetDevice asks).
  c10::cuda::_internal::setHasPrimaryContext([](c10::DeviceIndex) { return true; });
  alloc::init(1);
  Replay r;
  for (std::string text; std::getline(trace, text);) {
    r.line++;
    run_line(r, text);
  }
  print_stats();
  std::cout.flush();
  // Live blocks stay live, as the report of npumem-replay is taken.
  std::_Exit(0);
}
