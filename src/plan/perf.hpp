// Time per step for a whole model on one replica (tp GPUs working in lock step): decode steps
// and chunked prefill, dense attention vs CISA in the global-attention layers. Everything that is
// not attention is a roofline over weight reads (active experts only), activations and GEMM
// FLOPs; attention comes from the core model (cisa::predict) per layer; TP all-reduce and EP
// all-to-all from NVLink bandwidth. Times are seconds; kernels do not overlap (busy = sum).
#pragma once

#include <cstdint>
#include <string>

#include "model/hardware.hpp"
#include "model/point.hpp"
#include "plan/deploy.hpp"

namespace cisa::plan {

struct CommOptions {
  double link_efficiency = 0.80;     // achieved / nominal unidirectional NVLink bandwidth (EST)
  double collective_latency_us = 10;  // per all-reduce / all-to-all (EST)
};

struct PerfInputs {
  const DeployModel* model = nullptr;
  const Hardware* hw = nullptr;
  Rates rates{};                         // the card's rates (non-attention layers)
  const PointPricing* pricing = nullptr;  // attention: the dense baseline and CISA implementations
  Parallel par;
  WeightDtype weights = WeightDtype::bf16;
  CisaConfig cisa;  // kv_dtype, chunk, window, budget K, G, representatives
  CommOptions comm;
};

struct StepTimes {  // seconds for one forward (or a sum of forwards), per replica
  double layers = 0;            // non-attention work: projections, Mamba, MoE/MLP (weights + FLOPs + state I/O)
  double weight_bytes = 0;      // weight bytes read per GPU (diagnostic)
  double attn_global_dense = 0;  // global-attention layers, dense kernels
  double attn_global_cisa = 0;   // same layers with CISA (attention + scoring + top-k + setup + other)
  double attn_sliding = 0;       // sliding-window layers (dense, unchanged by CISA)
  double lm_head = 0;
  double comm = 0;               // TP all-reduce + EP all-to-all
  double dense() const { return layers + attn_global_dense + attn_sliding + lm_head + comm; }
  double cisa() const { return layers + attn_global_cisa + attn_sliding + lm_head + comm; }
  void add(const StepTimes& o, double times = 1.0);
};

// GEMM rate for the weight dtype (FLOP/s): calibrated BF16 GEMM rate scaled by the datasheet
// FP8/BF16 ratio for fp8 and nvfp4 (no FP4 rate in the GPU presets: nvfp4 computes at the FP8 rate).
double gemm_rate(const Hardware& hw, const Rates& r, WeightDtype wd);

// Non-attention layers + comm + LM head for a forward of `tokens` tokens per replica, of
// `seqs` sequences (Mamba state read + written once per sequence), `logit_rows` LM-head rows.
StepTimes layer_time(const PerfInputs& in, double tokens, double seqs, double logit_rows);

// One decode step: `batch` sequences per replica, each one new token at history `history`; with
// `positions` = k > 1 (multi-token prediction / speculative decoding) each sequence verifies k draft
// positions and CISA shares one selection over them (the core model's mtp phase, G = k).
StepTimes decode_step(const PerfInputs& in, int batch, std::int64_t history, int positions = 1);

// Prefill of one sequence of `context` tokens in chunks of `chunk` tokens (TTFT when isolated).
StepTimes prefill_sequence(const PerfInputs& in, std::int64_t context, int chunk);

// ring all-reduce of `bytes` over tp GPUs
double allreduce_time(const PerfInputs& in, double bytes);

}  // namespace cisa::plan
