#include "cisa/hardware.hpp"

#include <cmath>
#include <stdexcept>

namespace cisa {

std::string to_string(Basis b) {
  return b == Basis::calibrated ? "calibrated" : "speed_of_light";
}

Basis parse_basis(const std::string& s) {
  if (s == "calibrated") return Basis::calibrated;
  if (s == "speed_of_light") return Basis::speed_of_light;
  throw std::invalid_argument("unknown basis '" + s + "' (expected calibrated or speed_of_light)");
}

Rates resolve_rates(const Hardware& hw, Basis basis) {
  Rates r{};
  r.basis = basis;
  r.sms = static_cast<int>(hw.sms.value);
  r.l2_bytes = std::isnan(hw.l2_mb.value) ? 0.0 : hw.l2_mb.value * 1e6;
  if (basis == Basis::calibrated) {
    if (!hw.has_calibration)
      throw std::invalid_argument("GPU '" + hw.name +
                                  "' has no calibration section; use basis: speed_of_light");
    r.read_bw_Bps = hw.cal.read_bw_tbs.value * 1e12;
    r.gemm_flops = hw.cal.gemm_bf16_tflops.value * 1e12;
    r.attention_flops = hw.cal.attention_bf16_tflops.value * 1e12;
    r.peer_attention_flops = std::isnan(hw.cal.peer_attention_bf16_tflops.value)
                                 ? r.attention_flops
                                 : hw.cal.peer_attention_bf16_tflops.value * 1e12;
    r.launch_s = hw.cal.launch_overhead_us.value * 1e-6;
    r.topk_elem_passes_per_s_per_sm = hw.cal.topk_elem_passes_per_ns_per_sm.value * 1e9;
    r.l2_reuse = hw.cal.l2_reuse.value;
    // Optional measured structure; each falls back to the single-number model it refines.
    auto opt = [](const Figure& f, double scale, double fallback) {
      return std::isnan(f.value) ? fallback : f.value * scale;
    };
    r.write_bw_Bps = opt(hw.cal.write_bw_tbs, 1e12, r.read_bw_Bps);
    const double legacy_scoring = opt(hw.cal.scoring_bw_tbs, 1e12, NAN);
    r.scoring_read_bw_Bps = opt(hw.cal.scoring_read_bw_tbs, 1e12,
                                std::isnan(legacy_scoring) ? r.read_bw_Bps : legacy_scoring);
    r.scoring_write_bw_Bps = opt(hw.cal.scoring_write_bw_tbs, 1e12,
                                 std::isnan(legacy_scoring) ? r.write_bw_Bps : legacy_scoring);
    const double floor = opt(hw.cal.kernel_floor_us, 1e-6, r.launch_s);
    r.attention_floor_s = opt(hw.cal.attention_floor_us, 1e-6, floor);
    r.scoring_floor_s = opt(hw.cal.scoring_floor_us, 1e-6, floor);
    r.topk_floor_s = opt(hw.cal.topk_floor_us, 1e-6, floor);
    r.other_floor_s = floor;
    r.h2d_latency_s = opt(hw.cal.h2d_latency_us, 1e-6, r.launch_s);
    r.h2d_Bps = opt(hw.cal.h2d_bw_gbs, 1e9, INFINITY);
    r.topk_l2_elem_passes_per_s_per_sm =
        opt(hw.cal.topk_l2_elem_passes_per_ns_per_sm, 1e9, r.topk_elem_passes_per_s_per_sm);
    for (int i = 0; i < 4; ++i) r.attention_page_s[i] = opt(hw.cal.attention_page_ns[i], 1e-9, 0.0);
    r.topk_out_ids_per_s_per_sm = opt(hw.cal.topk_out_ids_per_ns_per_sm, 1e9, INFINITY);
    r.scoring_tile_s = opt(hw.cal.scoring_tile_us, 1e-6, 0.0);
    r.source = "calibration: " + hw.cal.basis;
  } else {
    // Datasheet peaks; no launch cost; top-k limited only by shared-memory bandwidth
    // (128 B/clock/SM = 32 fp32 keys at an assumed 1.98 GHz boost clock).
    r.read_bw_Bps = hw.hbm_bw_tbs.value * 1e12;
    r.gemm_flops = hw.bf16_tflops.value * 1e12;
    r.attention_flops = hw.bf16_tflops.value * 1e12;
    r.peer_attention_flops = r.attention_flops;
    r.launch_s = 0.0;
    r.topk_elem_passes_per_s_per_sm = 32.0 * 1.98e9;
    r.l2_reuse = 1.0;
    r.write_bw_Bps = r.read_bw_Bps;
    r.scoring_read_bw_Bps = r.scoring_write_bw_Bps = r.read_bw_Bps;
    r.attention_floor_s = r.scoring_floor_s = r.topk_floor_s = r.other_floor_s = 0.0;
    r.h2d_latency_s = 0.0;
    r.h2d_Bps = INFINITY;
    r.topk_l2_elem_passes_per_s_per_sm = r.topk_elem_passes_per_s_per_sm;
    for (double& x : r.attention_page_s) x = 0.0;
    r.topk_out_ids_per_s_per_sm = INFINITY;
    r.scoring_tile_s = 0.0;
    r.source = "speed of light: datasheet bandwidth and BF16 rate of " + hw.display_name;
  }
  return r;
}

}  // namespace cisa
