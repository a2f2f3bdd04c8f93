// Instrumentation: CUDA events per launch + NVTX ranges named by component.
#include <nvtx3/nvToolsExt.h>

#include "cisa_kernels/instrument.hpp"
#include "common.cuh"

namespace cisa::kernels {

struct Instrument::Impl {
  bool time = true;
  struct Pending {
    LaunchRecord rec;
    cudaEvent_t start = nullptr, stop = nullptr;
  };
  std::vector<Pending> pending;
};

Instrument::Instrument(bool time_launches) : impl_(std::make_unique<Impl>()) { impl_->time = time_launches; }

Instrument::~Instrument() {
  for (auto& p : impl_->pending) {
    if (p.start) cudaEventDestroy(p.start);
    if (p.stop) cudaEventDestroy(p.stop);
  }
}

int Instrument::begin(Component c, const char* kernel, double bytes, double fu, double fi, Stream s) {
  Impl::Pending p;
  p.rec.component = c;
  p.rec.kernel = kernel;
  p.rec.bytes = bytes;
  p.rec.flops_useful = fu;
  p.rec.flops_issued = fi;
  if (impl_->time) {
    CISA_CUDA(cudaEventCreate(&p.start));
    CISA_CUDA(cudaEventCreate(&p.stop));
    CISA_CUDA(cudaEventRecord(p.start, s));
  }
  impl_->pending.push_back(p);
  return static_cast<int>(impl_->pending.size()) - 1;
}

void Instrument::end(int id, Stream s) {
  auto& p = impl_->pending.at(static_cast<size_t>(id));
  if (p.stop) CISA_CUDA(cudaEventRecord(p.stop, s));
}

std::vector<LaunchRecord> Instrument::collect() {
  std::vector<LaunchRecord> out;
  for (auto& p : impl_->pending) {
    if (p.start) {
      CISA_CUDA(cudaEventSynchronize(p.stop));
      float ms = 0;
      CISA_CUDA(cudaEventElapsedTime(&ms, p.start, p.stop));
      p.rec.ms = ms;
      cudaEventDestroy(p.start);
      cudaEventDestroy(p.stop);
    }
    out.push_back(p.rec);
  }
  impl_->pending.clear();
  return out;
}

ScopedLaunch::ScopedLaunch(Instrument* ins, Component c, const char* kernel, double bytes, double fu, double fi,
                           Stream s)
    : ins_(ins), s_(s) {
  nvtxRangePushA(component_name(c));
  if (ins_) id_ = ins_->begin(c, kernel, bytes, fu, fi, s);
}

ScopedLaunch::~ScopedLaunch() {
  if (ins_) ins_->end(id_, s_);
  nvtxRangePop();
}

}  // namespace cisa::kernels
