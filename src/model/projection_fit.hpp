// The index projection's cuBLAS GEMM from calibrate's grid of its own shapes (NOTES "Session 11
// (lead): the index projection's cuBLAS GEMM"): t = floor + max(bytes / read rate, FLOPs / MMA
// rate). cuBLAS picks tiles and split-K to fill the SMs at every measured shape, so no wave
// quantisation or CTA-count term; skinny shapes stream their activations below the card's rate.
// The decode step's projection (n = one column per sequence) is fitted apart on skinny shapes,
// bytes alone (its FLOPs are negligible): t = floor + bytes / read rate (NOTES session 19).
#pragma once

#include <string>
#include <vector>

namespace cisa {

// One GEMM out[m x n] = W[m x k] X[k x n] in BF16 (m = KV heads x 128, n = tokens, k = hidden).
struct ProjectionSample {
  double m = 0, n = 0, k = 0;
  double t_s = 0;  // measured
  double bytes() const { return 2.0 * (m * k + k * n + m * n); }
  double flops() const { return 2.0 * m * n * k; }
};

// Which terms the fitted form has: bytes and FLOPs (calibrate's prefill grid), or bytes alone (its
// skinny decode grid: the MMA term fixed off).
enum class ProjectionForm { bytes_and_flops, bytes_only };

struct ProjectionFit {
  bool ok = false;
  double floor_s = 0, read_Bps = 0;
  double mma_flops = 0;  // 0 for ProjectionForm::bytes_only (no such term)
  double rms_rel = 0, median_rel = 0, worst_rel = 0;  // relative residuals over the samples
  std::string note;                                   // why not ok
};

// Least squares of relative residuals: both rates searched on a log grid (read 0.1-10 TB/s, MMA
// 10-5,000 TF/s) with two refinements, the floor (>= 0) solved in closed form at each. bytes_only
// searches the read rate alone (the same search, the MMA term off) and needs no FLOP-bound shape.
ProjectionFit fit_projection(const std::vector<ProjectionSample>& samples,
                             ProjectionForm form = ProjectionForm::bytes_and_flops);

// The form's time at a shape.
double projection_time(const ProjectionSample& s, double floor_s, double read_Bps,
                       double mma_flops);

}  // namespace cisa
