// upstream_npu_replay.cpp - replay an npumemfs trace through torch_npu's
// own NPUCachingAllocator (v2.6.0's NPUCachingAllocator.cpp and
// NPUAllocatorConfig.cpp, unmodified, over the stand-ins of npu_standins/)
// on libnpusim, and print memory_stats() as torch.npu does: "key value"
// lines, as `npumem-replay --flavor npu --format stats`.
//
//     upstream_npu_replay TRACE
//
// PYTORCH_NPU_ALLOC_CONF and NPUSIM_CAPACITY come from the environment.
// The trace is driven as npumem-replay drives the npu flavor
// (src/workload/replay.c): stream S >= 1 is the S-th getStreamFromPool()
// of this fresh process; a free first launches open work on each stream
// its ID was record_stream'ed to (unless that stream captures), so its
// events wait for the next sync or complete line; an OOM leaves the ID
// unallocated. Device 0 only.
//
// Graph lines make the calls NPUGraph makes (NPUGraph.cpp): capture_begin
// beginAllocateToPool with a filter that takes the capture's model on its
// stream, then aclmdlRICaptureBegin; capture_end aclmdlRICaptureEnd and
// endAllocateToPool; graph_reset releasePool; a pool=P handle is
// graph_pool_handle() (MemPool().id()), a capture without one
// MemPool({}, false). MemPools are driven as torch_npu master's Python
// drives them, with 2.6.0's allocator calls: mempool_create is MemPool()
// and the pool master's constructor makes (createOrIncrefPool: a pool of
// use count 1, here beginAllocateToPool with a filter that takes nothing,
// then endAllocateToPool), mempool_begin is
// _npu_beginAllocateCurrentStreamToPool, mempool_end use_mem_pool's exit
// (endAllocateToPool, releasePool). 2.6.0 has no MemPool destructor, no
// use_on_oom and no no_split: such lines are bad input here. A call
// upstream refuses (an exception other than OutOfMemoryError) ends the
// replay with "refused at line N" on stdout and status 1.
//
// After the stats, "graph_pools.*" keys for each pool still in the
// allocator (checkPoolLiveAllocations finds it) with the use count its
// calls gave it, and one "segment ..." line for each segment of
// snapshot(), as upstream_replay prints them.
#include "torch_npu/csrc/core/npu/NPUCachingAllocator.h"
#include "torch_npu/csrc/core/npu/NPUFunctions.h"
#include "torch_npu/csrc/core/npu/NPUStream.h"

#include "npu_machine.h"
#include "replay_report.h"
#include "trace_reader.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

namespace alloc = c10_npu::NPUCachingAllocator;
using c10_npu::MempoolId_t;

struct Live {
  c10::DataPtr ptr;
  bool oomed = false;
  std::vector<long> uses;         // streams record_stream'ed since alloc
  std::vector<aclrtEvent> done;   // recorded at its free, for complete
};

// An NPUGraph as the allocator sees it: its pool, its model, and whether
// a capture ended (has_graph_exec_), which reset() asks.
struct Graph {
  MempoolId_t pool{0, 0};
  aclmdlRI model = nullptr;
  bool captured = false;
};

struct Capture {
  std::string graph;  // "" for an unnamed graph, which lives to the end
  Graph g;
};

using upstream::Refused;

struct Replay {
  std::vector<c10_npu::NPUStream> pool;     // pool[S - 1] is trace stream S
  std::map<long, long> named;               // trace stream -> order first named
  std::unordered_map<std::string, Live> ids;
  std::map<std::string, Graph> graphs;
  std::map<long, Capture> captures;         // by capturing trace stream
  std::map<std::string, MempoolId_t> pools; // handles and MemPools by name
  std::vector<MempoolId_t> known;           // every pool id taken, in order
  std::map<MempoolId_t, int> use;           // each pool's use count, as the allocator keeps it
  long line = 0;

  c10_npu::NPUStream stream(long s) {
    if (s == 0)
      return c10_npu::getDefaultNPUStream(0);
    named.emplace(s, static_cast<long>(named.size()) + 1);
    while (static_cast<long>(pool.size()) < s)
      pool.push_back(c10_npu::getStreamFromPool(false, 0));
    return pool[s - 1];
  }

  // npumem-replay's snapshot numbers streams as the trace first names them.
  long stream_number(aclrtStream as) {
    if (as == c10_npu::getDefaultNPUStream(0).stream())
      return 0;
    for (size_t i = 0; i < pool.size(); i++)
      if (pool[i].stream() == as)
        return named.at(static_cast<long>(i) + 1);
    return -1;
  }

  [[noreturn]] void bad(const std::string& why) {
    std::cerr << "upstream_npu_replay: line " << line << ": " << why << "\n";
    std::exit(2);
  }

  void alloc(const std::string& id, size_t size, long s) {
    c10_npu::setCurrentNPUStream(stream(s));
    Live& l = ids[id];
    l = Live{};
    try {
      l.ptr = alloc::get()->allocate(size);
    } catch (const c10::OutOfMemoryError&) {
      l.oomed = true;
    }
  }

  void drop_done(Live& l) {
    for (aclrtEvent e : l.done)
      aclrtDestroyEvent(e);
    l.done.clear();
  }

  void free(const std::string& id) {
    auto it = ids.find(id);
    if (it == ids.end())
      bad("free of unknown id " + id);
    Live& l = it->second;
    if (!l.oomed && l.ptr.get() != nullptr) {
      drop_done(l);
      for (long s : l.uses) {
        aclrtStream as = stream(s).stream();
        // Work on a capturing stream would be captured, not run.
        if (npu_machine_capturing(as))
          continue;
        npu_machine_launch_open(as);
        aclrtEvent e;
        aclrtCreateEvent(&e);
        aclrtRecordEvent(e, as);
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
    for (aclrtEvent e : l.done)
      aclrtSynchronizeEvent(e);
    drop_done(l);
  }

  void sync(const std::string& s) {
    aclError e = ACL_ERROR_NONE;
    if (s.empty())
      e = aclrtSynchronizeDevice();
    else if (std::stol(s) == 0 || named.count(std::stol(s)))
      e = aclrtSynchronizeStream(stream(std::stol(s)).stream());
    // else: a stream nothing has used yet, which the replay does not make.
    if (e != ACL_ERROR_NONE)
      throw Refused{"the runtime refuses the sync (" + std::to_string(e) + ")"};
  }

  void empty_cache() { alloc::emptyCache(true); }
  void reset_peak() { alloc::resetPeakStats(0); }
  void reset_accumulated() { alloc::resetAccumulatedStats(0); }
  void fraction(double f) { alloc::setMemoryFraction(f, 0); }

  void other_line(const std::vector<std::string>& f) { bad("unsupported line: " + f[0]); }

  MempoolId_t take(MempoolId_t id) {
    known.push_back(id);
    return id;
  }

  // beginAllocateToPool's use count: a new pool starts at 1, an existing
  // one takes one more.
  void begin(MempoolId_t id, std::function<bool(aclrtStream)> filter) {
    alloc::beginAllocateToPool(0, id, std::move(filter));
    use[id] = exists(id) && use.count(id) ? use[id] + 1 : 1;
  }

  void release(MempoolId_t id) {
    alloc::releasePool(0, id);
    use[id]--;
  }

  bool exists(MempoolId_t id) {
    try {
      alloc::checkPoolLiveAllocations(0, id, {});
      return true;
    } catch (const c10::Error&) {
      return false;
    }
  }

  // pool=P, pool=handle:P or pool=graph:G, as capture_begin's pool.
  MempoolId_t capture_pool(const std::string& spec) {
    if (spec.compare(0, 6, "graph:") == 0) {
      auto g = graphs.find(spec.substr(6));
      if (g == graphs.end() || !g->second.captured)
        throw Refused{"Called NPUGraph::pool() without a preceding successful capture."};
      return g->second.pool;
    }
    std::string name = spec.compare(0, 7, "handle:") == 0 ? spec.substr(7) : spec;
    MempoolId_t& id = pools[name];
    if (id == MempoolId_t{0, 0})
      id = take(c10_npu::MemPool().id());
    return id;
  }

  // NPUGraph::capture_begin's calls.
  void capture_begin(long s, const std::string& pool_spec, const std::string& graph,
                     const std::string& mode) {
    if (!mode.empty() && mode != "global")
      bad("only the global capture mode");
    c10_npu::setCurrentNPUStream(stream(s));
    if (s == 0)
      throw Refused{"NPU graphs must be captured on a non-default stream. "
                    "(However, after capture, it's ok to replay them on the default stream.)"};
    MempoolId_t id = pool_spec.empty() ? take(c10_npu::MemPool({}, false).id()) : capture_pool(pool_spec);
    aclrtStream as = stream(s).stream();
    Capture& c = captures[s];
    c = Capture{graph, Graph{id, nullptr, false}};
    aclmdlRI* model = &c.g.model;
    begin(id, [model](aclrtStream target) {
      aclmdlRICaptureStatus status;
      aclmdlRI ri;
      NPU_CHECK_ERROR(aclmdlRICaptureGetInfo(target, &status, &ri));
      return status == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE && ri == *model;
    });
    NPU_CHECK_ERROR(aclmdlRICaptureBegin(as, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    aclmdlRICaptureStatus status;
    NPU_CHECK_ERROR(aclmdlRICaptureGetInfo(as, &status, model));
  }

  void capture_end(long s) {
    c10_npu::setCurrentNPUStream(stream(s));
    Capture c = captures.at(s);
    captures.erase(s);
    aclmdlRI ri;
    NPU_CHECK_ERROR(aclmdlRICaptureEnd(stream(s).stream(), &ri));
    alloc::endAllocateToPool(0, c.g.pool);
    c.g.captured = true;
    if (!c.graph.empty())
      graphs[c.graph] = c.g;
  }

  // NPUGraph::reset: the pool goes back only after a finished capture.
  void graph_reset(const std::string& name) {
    Graph& g = graphs.at(name);
    if (g.captured) {
      release(g.pool);
      aclmdlRIDestroy(g.model);
    }
    g = Graph{};
  }

  void mempool_create(const std::string& name, const std::vector<std::string>& flags) {
    if (!flags.empty())
      bad("torch_npu 2.6.0's MemPool has no " + flags[0]);
    MempoolId_t id = take(c10_npu::MemPool().id());
    pools[name] = id;
    begin(id, [](aclrtStream) { return false; });
    alloc::endAllocateToPool(0, id);
  }

  void mempool_begin(const std::string& name, long s) {
    aclrtStream as = stream(s).stream();
    begin(pools.at(name), [as](aclrtStream target) { return target == as; });
  }

  void mempool_end(const std::string& name) {
    alloc::endAllocateToPool(0, pools.at(name));
    release(pools.at(name));
  }

  void mempool_release(const std::string&) { bad("torch_npu 2.6.0's MemPool has no destructor"); }

  // aclmdlRIExecuteAsync would be work on the stream that events wait
  // for; the traces replay no graph.
  void graph_replay(const std::string& name) { bad("graph_replay " + name + " is not driven"); }
};

// torch_npu/csrc/npu/Module.cpp's memoryStats, flattened as
// torch.npu.memory_stats: the keys 2.6.0 has.
void print_stats() {
  upstream::print_keys(upstream::stats_keys(alloc::getDeviceStats(0)));
}

// 2.6.0 has no getPoolUseCount: a pool is in the allocator while
// checkPoolLiveAllocations finds it, with the count its calls gave it.
void print_pools(Replay& r, const std::vector<alloc::SegmentInfo>& segs) {
  upstream::print_pools<MempoolId_t>(r.known, segs, [&r](MempoolId_t id, int* uses) {
    *uses = r.use[id];
    return r.exists(id);
  });
}

void print_segments(Replay& r, const std::vector<alloc::SegmentInfo>& segs) {
  upstream::print_segments<alloc::SegmentInfo, aclrtStream>(
      segs, [&r](aclrtStream s) { return r.stream_number(s); });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: upstream_npu_replay TRACE\n";
    return 2;
  }
  std::ifstream trace(argv[1]);
  if (!trace) {
    std::cerr << "upstream_npu_replay: cannot read " << argv[1] << "\n";
    return 2;
  }
  const char* capacity = std::getenv("NPUSIM_CAPACITY");
  if (npu_machine_start(capacity ? std::strtoull(capacity, nullptr, 10) : 4ull << 30) != 0) {
    std::cerr << "upstream_npu_replay: the simulated NPU does not start\n";
    return 2;
  }
  NPU_CHECK_ERROR(c10_npu::SetDevice(0));
  alloc::init();
  Replay r;
  upstream::run_trace(r, trace, "upstream_npu_replay");
  print_stats();
  const auto segs = alloc::snapshot().segments;
  print_pools(r, segs);
  print_segments(r, segs);
  std::cout.flush();
  // Live blocks, graphs and pools stay, as the report of npumem-replay is taken.
  std::_Exit(0);
}
