// Top-k: per row choose the K highest of n_e fp32 scores (ties -> lower page index), output the chosen
// logical pages in ascending order translated to physical page IDs through the block table, followed
// by the window and tail pages (logical [n_e, list_end)) -> one row of the sparse block table.
// Radix select over order-preserving uint32 keys (8-bit digits, 4 histogram passes + 1 collect pass).
#pragma once
#include <vector>

#include "cisa_kernels/instrument.hpp"
#include "cisa_kernels/paged_kv.hpp"

namespace cisa::kernels {

struct TopkRow {
  int seq = 0;       // block-table row
  int n_e = 0;       // eligible pages (scores [0, n_e)); must be > K
  int list_end = 0;  // logical pages [n_e, list_end) are appended (window + tail)
};

struct TopkArgs {
  // device
  const float* scores = nullptr;  // [n_rows][score_stride]
  int score_stride = 0;
  const TopkRow* rows = nullptr;
  BlockTable table;
  int* out = nullptr;             // [n_rows][out_stride]: K selected + (list_end - n_e) appended
  int out_stride = 0;
  int k = 0;
  // host copy
  const std::vector<TopkRow>* rows_host = nullptr;
};

void topk_select(const TopkArgs& a, Stream s, Instrument* ins = nullptr);

}  // namespace cisa::kernels
