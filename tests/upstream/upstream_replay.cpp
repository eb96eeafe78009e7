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
// unallocated. Device 0 only.
//
// Graph and mempool lines make the calls CUDAGraph and MemPool make
// (aten/src/ATen/cuda/CUDAGraph.cpp, c10/cuda/CUDACachingAllocator.cpp):
// capture_begin is beginAllocateToPool with a filter that takes the
// capturing stream, capture_end endAllocateToPool, graph_reset
// releasePool; a pool=P handle is MemPool::graph_pool_handle(), a capture
// without one graph_pool_handle(false); mempool_create is MemPool(),
// mempool_begin/_end what _cuda_beginAllocateCurrentStreamToPool and
// use_mem_pool's exit call (endAllocateToPool, releasePool), and
// mempool_release the MemPool's destructor. 2.6.0's MemPool has neither
// use_on_oom nor no_split: such a line is refused. A call upstream
// refuses (an exception other than OutOfMemoryError) ends the replay with
// "refused at line N" on stdout and status 1, as npumem-replay stops.
//
// Pin lines go to ATen's pinned host allocator (upstream_host.h): pin is
// allocate, unpin its deleter, copy what a non-blocking copy does (work on
// the stream, record_event of the stream), host_empty_cache empty_cache;
// host_memory_stats.* keys follow memory_stats for a trace with pins, and
// a line a pin naming the block it got, as npumem-replay --format pins.
//
// After the stats, "graph_pools.*" keys as npumem-replay prints them, and
// one "segment ..." line for each segment of snapshot(): its pool,
// stream, kind, sizes and blocks (the differential compares sorted lines).
#include <c10/core/Allocator.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <cuda_runtime_api.h>
#include <fakecuda.h>

#include "replay_report.h"
#include "trace_reader.h"
#include "upstream_host.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

// Defined in CUDAFunctions.cpp for libtorch_cuda's CUDAHooks; no header.
namespace c10::cuda::_internal {
void setHasPrimaryContext(bool (*func)(c10::DeviceIndex));
}

namespace {

namespace alloc = c10::cuda::CUDACachingAllocator;
using c10::cuda::MempoolId_t;

struct Live {
  c10::DataPtr ptr;
  bool oomed = false;
  std::vector<long> uses;           // streams record_stream'ed since alloc
  std::vector<cudaEvent_t> done;    // recorded at its free, for complete
};

// A CUDAGraph as the allocator sees it: its pool and whether a capture
// ended (has_graph_), which reset() asks before releasing the pool.
struct Graph {
  MempoolId_t pool{0, 0};
  bool captured = false;
};

struct Capture {
  std::string graph;  // "" for an unnamed graph, which lives to the end
  Graph unnamed;
};

// A trace's pool name: a handle taken at its first pool= line, or a
// MemPool (mempool_create), whose id later pool= lines share.
struct Pool {
  MempoolId_t id{0, 0};
  std::unique_ptr<c10::cuda::MemPool> mempool;
};

struct Pin {
  void* ptr = nullptr;
  void* ctx = nullptr;
};

using upstream::Refused;

struct Replay {
  std::vector<c10::cuda::CUDAStream> pool;  // pool[S - 1] is trace stream S
  std::map<long, long> named;               // trace stream -> order first named
  std::unordered_map<std::string, Live> ids;
  std::map<std::string, Graph> graphs;
  std::map<long, Capture> captures;         // by capturing trace stream
  std::vector<Graph> ended;                 // unnamed graphs, kept to the end
  std::map<std::string, Pool> pools;
  std::vector<MempoolId_t> known;           // every pool id taken, in order
  std::unique_ptr<upstream::HostAllocator> host;  // made at the first pin
  std::unordered_map<std::string, Pin> pins;
  std::ostringstream pin_lines;  // --format pins' lines, in trace order
  uint64_t newest_block = 0;
  long line = 0;

  c10::cuda::CUDAStream stream(long s) {
    if (s == 0)
      return c10::cuda::getDefaultCUDAStream(0);
    named.emplace(s, static_cast<long>(named.size()) + 1);
    while (static_cast<long>(pool.size()) < s)
      pool.push_back(c10::cuda::getStreamFromPool(false, 0));
    return pool[s - 1];
  }

  // The number npumem-replay's snapshot gives the stream: the simulated
  // runtime's stream id, streams numbered as the trace first names them.
  long stream_number(cudaStream_t cs) {
    if (cs == c10::cuda::getDefaultCUDAStream(0).stream())
      return 0;
    for (size_t i = 0; i < pool.size(); i++)
      if (pool[i].stream() == cs)
        return named.at(static_cast<long>(i) + 1);
    return -1;
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
        // Work on a capturing stream would be captured, not run.
        if (captures.count(s))
          continue;
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
    else if (std::stol(s) == 0 || named.count(std::stol(s)))
      cudaStreamSynchronize(stream(std::stol(s)).stream());
    // else: a stream nothing has used yet, which the replay does not make.
  }

  MempoolId_t take(MempoolId_t id) {
    known.push_back(id);
    return id;
  }

  // pool=P, pool=handle:P or pool=graph:G, as the capture's pool argument.
  MempoolId_t capture_pool(const std::string& spec) {
    if (spec.compare(0, 6, "graph:") == 0) {
      auto g = graphs.find(spec.substr(6));
      if (g == graphs.end() || !g->second.captured)
        throw Refused{"Called CUDAGraph::pool() without a preceding successful capture."};
      return g->second.pool;
    }
    std::string name = spec.compare(0, 7, "handle:") == 0 ? spec.substr(7) : spec;
    Pool& p = pools[name];
    if (p.id == MempoolId_t{0, 0})
      p.id = take(c10::cuda::MemPool::graph_pool_handle());
    return p.id;
  }

  // CUDAGraph::capture_begin's allocator calls; the filter stands for
  // "this stream captures into this graph", which only the capturing
  // stream does here.
  void capture_begin(long s, const std::string& pool, const std::string& graph,
                     const std::string& mode) {
    (void)mode;  // the thread's capture mode decides nothing the allocator does
    if (s == 0)
      throw Refused{"CUDA graphs must be captured on a non-default stream."};
    MempoolId_t id = pool.empty() ? take(c10::cuda::MemPool::graph_pool_handle(false))
                                  : capture_pool(pool);
    cudaStream_t cs = stream(s).stream();
    alloc::beginAllocateToPool(0, id, [cs](cudaStream_t target) { return target == cs; });
    Capture& c = captures[s];
    c = Capture{graph, Graph{id, false}};
  }

  void capture_end(long s) {
    Capture c = captures.at(s);
    captures.erase(s);
    alloc::endAllocateToPool(0, c.unnamed.pool);
    c.unnamed.captured = true;
    if (c.graph.empty())
      ended.push_back(c.unnamed);
    else
      graphs[c.graph] = c.unnamed;
  }

  // CUDAGraph::reset: the pool goes back only after a finished capture.
  void graph_reset(const std::string& name) {
    Graph& g = graphs.at(name);
    if (g.captured)
      alloc::releasePool(0, g.pool);
    g = Graph{};
  }

  void mempool_create(const std::string& name, const std::vector<std::string>& flags) {
    if (!flags.empty())
      bad("PyTorch 2.6.0's MemPool has no " + flags[0]);
    Pool& p = pools[name];
    p.mempool = std::make_unique<c10::cuda::MemPool>();
    p.id = take(p.mempool->id());
  }

  void mempool_begin(const std::string& name, long s) {
    cudaStream_t cs = stream(s).stream();
    alloc::beginAllocateToPool(0, pools.at(name).id,
                               [cs](cudaStream_t target) { return target == cs; });
  }

  void mempool_end(const std::string& name) {
    alloc::endAllocateToPool(0, pools.at(name).id);
    alloc::releasePool(0, pools.at(name).id);
  }

  void mempool_release(const std::string& name) {
    pools.at(name).mempool.reset();
  }

  void empty_cache() { alloc::emptyCache(); }
  void reset_peak() { alloc::resetPeakStats(0); }
  void reset_accumulated() { alloc::resetAccumulatedStats(0); }
  void fraction(double f) { alloc::setMemoryFraction(f, 0); }
  // cudaGraphLaunch: nothing the allocator sees.
  void graph_replay(const std::string&) {}
  void other_line(const std::vector<std::string>& f);

  void pin(const std::string& id, size_t size, long s) {
    stream(s);
    if (!host)
      host = std::make_unique<upstream::HostAllocator>();
    auto got = host->allocate(size);
    pins[id] = Pin{got.first, got.second};
    tell_pin(size, got);
  }

  // Blocks are named as made, so a pin's is new if no earlier pin's was as high.
  void tell_pin(size_t size, std::pair<void*, void*> got) {
    pin_lines << "pin line=" << line << " size=" << size << " ";
    uint64_t block = host->serial(got.first);
    if (block == 0) {
      pin_lines << "block=- block_size=0\n";
      return;
    }
    pin_lines << "block=" << block << " block_size="
              << static_cast<upstream::HostBlock*>(got.second)->size_ << " "
              << (block > newest_block ? "new" : "cached") << "\n";
    newest_block = std::max(newest_block, block);
  }

  void unpin(const std::string& id) {
    host->free(pins.at(id).ctx);
    pins.erase(id);
  }

  void copy(const std::string& id, long s) {
    c10::cuda::CUDAStream cs = stream(s);
    fakecuda_launch_open(cs.stream());
    const Pin& p = pins.at(id);
    host->record_event(p.ptr, p.ctx, cs);
  }
};

long stream_option(const std::vector<std::string>& f, size_t from) {
  std::string s = upstream::text_option(f, from, "stream");
  return s.empty() ? 0 : std::stol(s);
}

// Pinned memory lines, or bad input.
void Replay::other_line(const std::vector<std::string>& f) {
  const std::string& cmd = f[0];
  if (cmd == "pin") {
    pin(f.at(1), std::stoull(f.at(2)), stream_option(f, 3));
  } else if (cmd == "unpin") {
    unpin(f.at(1));
  } else if (cmd == "copy") {
    copy(f.at(1), std::stol(f.at(2)));
  } else if (cmd == "host_empty_cache") {
    if (host)
      host->empty_cache();
  } else {
    bad("unsupported line: " + cmd);
  }
}

// torch/csrc/cuda/Module.cpp memoryStats, flattened as torch.cuda.memory_stats.
void print_stats() {
  const auto st = alloc::getDeviceStats(0);
  auto out = upstream::stats_keys(st);
  out["num_sync_all_streams"] = st.num_sync_all_streams;
  out["num_device_alloc"] = st.num_device_alloc;
  out["num_device_free"] = st.num_device_free;
  upstream::print_keys(out);
}

// Every private pool still in graph_pools (getPoolUseCount asserts the
// others away), then every segment of the device.
void print_pools(Replay& r, const std::vector<alloc::SegmentInfo>& segs) {
  upstream::print_pools<MempoolId_t>(r.known, segs, [](MempoolId_t id, int* uses) {
    try {
      *uses = alloc::getPoolUseCount(0, id);
      return true;
    } catch (const c10::Error&) {
      return false;
    }
  });
}

void print_segments(Replay& r, const std::vector<alloc::SegmentInfo>& segs) {
  upstream::print_segments<alloc::SegmentInfo, cudaStream_t>(
      segs, [&r](cudaStream_t s) { return r.stream_number(s); });
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
  upstream::run_trace(r, trace, "upstream_replay");
  print_stats();
  const auto segs = alloc::snapshot().segments;
  print_pools(r, segs);
  print_segments(r, segs);
  if (r.host)
    r.host->print_stats(std::cout);
  std::cout << r.pin_lines.str();
  std::cout.flush();
  // Live blocks, graphs and pools stay, as the report of npumem-replay is taken.
  std::_Exit(0);
}
