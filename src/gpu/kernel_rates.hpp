// Achieved rates of this project's kernel classes at reference shapes, for `cisa-sim calibrate`:
// the model's efficiencies come from the kernels it is compared with, measured on the card.
#pragma once

#include <string>

namespace cisa::gpu {

struct KernelRates {
  double attention_tflops = 0;  // useful FLOPs / time, dense prefill with full 128-row tiles
  std::string attention_method;
  double topk_elem_passes_per_ns_per_sm = 0;  // one CTA per row: 65,536 keys x 4 passes / row time
  std::string topk_method;
  double scoring_bw_tbs = 0;  // achieved HBM bytes / time of the scoring kernel (mixed read + fp32 write)
  std::string scoring_method;
};

KernelRates measure_kernel_rates(int sms);

}  // namespace cisa::gpu
