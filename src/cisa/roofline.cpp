#include "cisa/roofline.hpp"

#include <algorithm>
#include <cmath>

namespace cisa {

void ComponentTimes::add(const ComponentTimes& o) {
  attention += o.attention;
  scoring += o.scoring;
  topk += o.topk;
  setup += o.setup;
  other += o.other;
}

double achieved_bandwidth(double ctas, const Rates& rates) {
  return rates.read_bw_Bps * std::min(1.0, std::max(1.0, ctas) / (rates.bw_saturation_sm_fraction * rates.sms));
}

double kernel_time(const KernelCost& k, double flop_rate, const Rates& rates) {
  if (k.launches <= 0) return 0.0;
  const double sms = rates.sms;
  const double ctas = std::max(1.0, k.ctas);
  const double bw = achieved_bandwidth(ctas, rates);
  const double waves = std::ceil(ctas / sms);
  const double fill = ctas / (waves * sms);
  const double t_mem = k.dram_bytes / bw;
  const double t_mma = k.flops_issued / (flop_rate * fill);
  return std::max(t_mem, t_mma) + k.launches * rates.launch_s;
}

double topk_time(const ForwardCost& f, int radix_passes, const Rates& rates) {
  if (f.topk.launches <= 0 || f.topk_rows <= 0) return 0.0;
  const double per_row = f.topk_elements / f.topk_rows * radix_passes /
                         rates.topk_elem_passes_per_s_per_sm;
  const double waves = std::ceil(f.topk_rows / rates.sms);
  const double t_mem = f.topk.dram_bytes / achieved_bandwidth(f.topk_rows, rates);
  return std::max(waves * per_row, t_mem) + f.topk.launches * rates.launch_s;
}

ForwardTimes forward_times(const ForwardCost& f, int radix_passes, const Rates& rates) {
  ForwardTimes t;
  t.dense.attention = kernel_time(f.attention_dense, rates.attention_flops, rates);
  t.cisa.attention = kernel_time(f.attention_cisa, rates.attention_flops, rates);
  t.dense_peer_attention = kernel_time(f.attention_dense, rates.peer_attention_flops, rates);
  {
    Rates scoring_rates = rates;  // the scoring kernel class streams at its own achieved bandwidth
    scoring_rates.read_bw_Bps = rates.scoring_bw_Bps;
    t.cisa.scoring = kernel_time(f.scoring, rates.gemm_flops, scoring_rates);
  }
  t.cisa.topk = topk_time(f, radix_passes, rates);
  t.cisa.setup = kernel_time(f.setup, rates.gemm_flops, rates);
  t.cisa.other = kernel_time(f.other, rates.gemm_flops, rates);
  return t;
}

}  // namespace cisa
