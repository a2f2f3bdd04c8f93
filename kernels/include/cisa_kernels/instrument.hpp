// Per-launch instrumentation: component, kernel name, CUDA-event time, and the bytes and FLOPs the
// launch is expected to move, computed by each entry point from its actual arguments.
// Component names are the project's: attention, scoring, topk, setup, other (also the NVTX ranges).
#pragma once
#include <memory>
#include <string>
#include <vector>

struct CUstream_st;

namespace cisa::kernels {

using Stream = CUstream_st*;  // cudaStream_t without the CUDA headers

enum class Component { attention, scoring, topk, setup, other };

inline const char* component_name(Component c) {
  switch (c) {
    case Component::attention: return "attention";
    case Component::scoring: return "scoring";
    case Component::topk: return "topk";
    case Component::setup: return "setup";
    case Component::other: return "other";
  }
  return "other";
}

struct LaunchRecord {
  Component component = Component::other;
  std::string kernel;
  double ms = 0.0;             // CUDA-event time of the launch (0 when timing is off)
  double bytes = 0.0;          // expected HBM bytes (reads + writes)
  double flops_useful = 0.0;   // FLOPs on real rows/tokens
  double flops_issued = 0.0;   // FLOPs the tiles actually execute (padding included)
};

// Collects records of the launches made with it. Not thread-safe; one per stream of work.
class Instrument {
 public:
  explicit Instrument(bool time_launches = true);
  ~Instrument();
  Instrument(const Instrument&) = delete;
  Instrument& operator=(const Instrument&) = delete;

  // Used by the entry points: begin() pushes the NVTX range and records the start event.
  int begin(Component c, const char* kernel, double bytes, double flops_useful, double flops_issued,
            Stream s);
  void end(int id, Stream s);
  // Synchronises, fills in the times and returns (and clears) the records.
  std::vector<LaunchRecord> collect();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// RAII helper used inside the entry points; a null Instrument still emits the NVTX range.
class ScopedLaunch {
 public:
  ScopedLaunch(Instrument* ins, Component c, const char* kernel, double bytes, double flops_useful,
               double flops_issued, Stream s);
  ~ScopedLaunch();
  ScopedLaunch(const ScopedLaunch&) = delete;
  ScopedLaunch& operator=(const ScopedLaunch&) = delete;

 private:
  Instrument* ins_;
  Stream s_;
  int id_ = -1;
};

}  // namespace cisa::kernels
