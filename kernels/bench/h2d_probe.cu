// Pinned host-to-device copy time against its size, isolated and queued behind a kernel (as the
// step's setup copy is, behind the index projection): `h2d_probe` prints the median and the 10th /
// 90th percentiles of 55 timed copies per size. Session 6 on the H200: queued copies of at most
// 1,024 B take the small-copy latency (~3.8 us), larger ones ~5.7 us plus bytes / bandwidth
// (results/h200/session6_final/h2d_probe.txt; the cisa_kernels profile's setup_inline_bytes).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "h2d_probe: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ? 77 : 1);
  }
}

__global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

}  // namespace

int main() {
  const int sizes[] = {64, 256, 512, 768, 1024, 1088, 1152, 1280, 1536, 2048, 3072, 4096, 8192, 16384, 65536, 557056};
  void* host = nullptr;
  void* dev = nullptr;
  check(cudaMallocHost(&host, 1 << 20), "cudaMallocHost");
  check(cudaMalloc(&dev, 1 << 20), "cudaMalloc");
  cudaStream_t s;
  check(cudaStreamCreate(&s), "cudaStreamCreate");
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  for (int queued = 0; queued < 2; ++queued) {
    std::printf("%s\n", queued ? "behind a 30 us kernel" : "isolated (after sync)");
    for (int size : sizes) {
      std::vector<float> us;
      for (int rep = 0; rep < 60; ++rep) {
        check(cudaDeviceSynchronize(), "sync");
        if (queued) spin<<<132, 128, 0, s>>>(60000);
        check(cudaEventRecord(a, s), "event");
        check(cudaMemcpyAsync(dev, host, static_cast<size_t>(size), cudaMemcpyHostToDevice, s), "copy");
        check(cudaEventRecord(b, s), "event");
        check(cudaEventSynchronize(b), "event sync");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, a, b), "elapsed");
        if (rep >= 5) us.push_back(ms * 1000.0f);  // the first five warm up
      }
      std::sort(us.begin(), us.end());
      std::printf("  %7d B: median %.2f us (p10 %.2f, p90 %.2f)\n", size, us[us.size() / 2], us[us.size() / 10],
                  us[us.size() * 9 / 10]);
    }
  }
  return 0;
}
