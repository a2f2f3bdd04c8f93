// Microbenchmarks of the card the model is calibrated with (`cisa-sim calibrate`): streaming read
// and copy bandwidth, BF16 GEMM rate (cuBLAS), and launch overhead. Each returns the median of
// timed repetitions after a warm-up; inputs are random, never zeros.
#pragma once

#include <string>
#include <vector>

namespace cisa::gpu {

struct DeviceInfo {
  bool available = false;
  std::string reason;  // why not, when !available
  std::string name;
  int sms = 0;
  double l2_bytes = 0;
  double memory_bytes = 0;
  int cc_major = 0, cc_minor = 0;
};

DeviceInfo query_device();  // never throws

struct ProbeResult {
  double value = 0;    // in the unit named by the probe
  double spread = 0;   // (max - min) / median over the timed repetitions
  std::string method;  // one line: what was timed
};

ProbeResult probe_read_bandwidth_tbs(double bytes = 4.0 * (1u << 30));
ProbeResult probe_copy_bandwidth_tbs(double bytes = 2.0 * (1u << 30));  // read + write counted
ProbeResult probe_gemm_bf16_tflops(int n = 8192);
ProbeResult probe_launch_overhead_us(int launches = 2000);
ProbeResult probe_write_bandwidth_tbs(double bytes = 4.0 * (1u << 30));  // streaming 16-byte stores
ProbeResult probe_kernel_floor_us();  // one empty kernel between two CUDA events
ProbeResult probe_h2d_latency_us();   // 256-byte pinned host-to-device copy between events
ProbeResult probe_h2d_bandwidth_gbs(double bytes = 256.0 * (1u << 20));

// The index projection's cuBLAS GEMM (column-major out[m x n] = W[m x k] X[k x n], BF16, fp32
// accumulate) as the measure path calls it: each repetition after a 256 MiB L2-flush memset
// (untimed), median of `reps`.
struct GemmShape {
  int m = 0, n = 0, k = 0;
};
struct GemmTiming {
  GemmShape shape;
  double ms = 0, spread = 0;
};
std::vector<GemmTiming> probe_projection_gemm(const std::vector<GemmShape>& shapes, int reps = 9);

}  // namespace cisa::gpu
