// trace_reader.h - a trace line (contrib/man/npumemfs-trace.5) as the call
// it makes, for upstream_replay and upstream_npu_replay alike: each driver
// is a type R with one method a command, run_line reads the fields and
// calls it. Lines of no command here go to R::other_line; run_trace runs
// a whole trace and stops at a call upstream refuses.
#pragma once

#include <c10/util/Exception.h>

#include <cstdlib>
#include <iostream>
#include <istream>
#include <sstream>
#include <string>
#include <vector>

namespace upstream {

// The value of a KEY=N field, or -1 when the field is not KEY's.
inline long option(const std::string& field, const char* key) {
  std::string k = std::string(key) + "=";
  if (field.compare(0, k.size(), k) != 0)
    return -1;
  return std::stol(field.substr(k.size()));
}

// The text of the first KEY=... field from f[from], or "".
inline std::string text_option(const std::vector<std::string>& f, size_t from, const char* key) {
  std::string k = std::string(key) + "=";
  for (size_t i = from; i < f.size(); i++)
    if (f[i].compare(0, k.size(), k) == 0)
      return f[i].substr(k.size());
  return "";
}

// The line's words, less a comment.
inline std::vector<std::string> fields(const std::string& text) {
  std::istringstream in(text.substr(0, text.find('#')));
  std::vector<std::string> f;
  for (std::string w; in >> w;)
    f.push_back(w);
  return f;
}

template <class R>
void run_alloc_line(R& r, const std::vector<std::string>& f) {
  long s = 0;
  for (size_t i = 3; i < f.size(); i++) {
    if (option(f[i], "stream") >= 0)
      s = option(f[i], "stream");
    else if (option(f[i], "device") > 0)
      r.bad("only device 0");
  }
  r.alloc(f.at(1), std::stoull(f.at(2)), s);
}

// Graph and MemPool lines; true when the line was one.
template <class R>
bool run_pool_line(R& r, const std::vector<std::string>& f) {
  const std::string& cmd = f[0];
  if (cmd == "capture_begin")
    r.capture_begin(std::stol(f.at(1)), text_option(f, 2, "pool"), text_option(f, 2, "graph"),
                    text_option(f, 2, "mode"));
  else if (cmd == "capture_end")
    r.capture_end(std::stol(f.at(1)));
  else if (cmd == "graph_replay")
    r.graph_replay(f.at(1));
  else if (cmd == "graph_reset")
    r.graph_reset(f.at(1));
  else if (cmd == "mempool_create")
    r.mempool_create(f.at(1), std::vector<std::string>(f.begin() + 2, f.end()));
  else if (cmd == "mempool_begin")
    r.mempool_begin(f.at(1), option(f.at(2), "stream"));
  else if (cmd == "mempool_end")
    r.mempool_end(f.at(1));
  else if (cmd == "mempool_release")
    r.mempool_release(f.at(1));
  else
    return false;
  return true;
}

template <class R>
void run_line(R& r, const std::string& text) {
  const std::vector<std::string> f = fields(text);
  if (f.empty())
    return;
  const std::string& cmd = f[0];
  if (cmd == "alloc")
    run_alloc_line(r, f);
  else if (cmd == "free")
    r.free(f.at(1));
  else if (cmd == "record_stream")
    r.record_stream(f.at(1), std::stol(f.at(2)));
  else if (cmd == "complete")
    r.complete(f.at(1));
  else if (cmd == "sync")
    r.sync(f.size() > 1 ? f[1] : "");
  else if (cmd == "empty_cache")
    r.empty_cache();
  else if (cmd == "reset_peak")
    r.reset_peak();
  else if (cmd == "reset_accumulated")
    r.reset_accumulated();
  else if (cmd == "fraction")
    r.fraction(std::stod(f.at(1)));
  else if (!run_pool_line(r, f))
    r.other_line(f);
}

// A call the driver knows upstream refuses, and upstream's message.
struct Refused {
  std::string what;
};

// "refused at line N" on stdout and status 1, as npumem-replay stops.
[[noreturn]] inline void refuse(const char* prog, long line, const std::string& why) {
  std::cout << "refused at line " << line << "\n";
  std::cerr << prog << ": line " << line << ": " << why << "\n";
  std::_Exit(1);
}

// Each line of the trace, r.line its number; an OutOfMemoryError is the
// driver's to catch, any other upstream error a refusal.
template <class R>
void run_trace(R& r, std::istream& trace, const char* prog) {
  for (std::string text; std::getline(trace, text);) {
    r.line++;
    try {
      run_line(r, text);
    } catch (const Refused& e) {
      refuse(prog, r.line, e.what);
    } catch (const c10::Error& e) {
      refuse(prog, r.line, e.what_without_backtrace());
    }
  }
}

}  // namespace upstream
