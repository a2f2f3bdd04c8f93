#include "plan/perf.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cisa::plan {

void StepTimes::add(const StepTimes& o, double times) {
  layers += o.layers * times;
  weight_bytes += o.weight_bytes * times;
  attn_global_dense += o.attn_global_dense * times;
  attn_global_cisa += o.attn_global_cisa * times;
  attn_sliding += o.attn_sliding * times;
  lm_head += o.lm_head * times;
  comm += o.comm * times;
}

double gemm_rate(const Hardware& hw, const Rates& r, WeightDtype wd) {
  if (wd == WeightDtype::bf16) return r.gemm_flops;
  const double ratio = hw.fp8_tflops.value > 0 ? hw.fp8_tflops.value / hw.bf16_tflops.value : 1.0;
  return r.gemm_flops * ratio;
}

namespace {

double v(const Figure& f) { return f.value; }

// Kernels per layer of each type (EST: norm+QKV, O; in_proj, conv, scan, out_proj; router,
// dispatch, grouped GEMM x2, combine; up/gate, down).
double kernels(LayerType t) {
  switch (t) {
    case LayerType::global_attention:
    case LayerType::sliding_attention: return 2;
    case LayerType::mamba: return 4;
    case LayerType::moe: return 5;
    case LayerType::mlp: return 2;
  }
  return 2;
}

double roofline(double bytes, double flops, double launches, const PerfInputs& in, double flop_rate) {
  return std::max(bytes / in.rates.read_bw_Bps, flops / flop_rate) + launches * in.rates.launch_s;
}

double link_Bps(const PerfInputs& in) {
  const double gbs = in.hw->nvlink_gbs.value;
  if (!(gbs > 0))
    throw std::invalid_argument("GPU '" + in.hw->name + "' has no nvlink_gbs: needed for tp/ep > 1");
  return gbs / 2.0 * 1e9 * in.comm.link_efficiency;  // bidirectional figure -> one direction
}

}  // namespace

double allreduce_time(const PerfInputs& in, double bytes) {
  const double tp = in.par.tp;
  if (tp <= 1) return 0.0;
  return 2.0 * (tp - 1) / tp * bytes / link_Bps(in) + in.comm.collective_latency_us * 1e-6;
}

StepTimes layer_time(const PerfInputs& in, double T, double seqs, double logit_rows) {
  const DeployModel& m = *in.model;
  const double h = m.hidden(), d = m.attn.head_dim.value, q = m.attn.q_heads.value;
  const double tp = in.par.tp, dp = in.par.dp;
  const double kv_rank = m.attn.per_rank(in.par.tp).kv_heads;
  const double b = weight_bytes_per_param(in.weights);
  const double F = gemm_rate(*in.hw, in.rates, in.weights);
  const double act = T * h * 2.0 * 4.0;  // EST: 4 hidden-wide bf16 reads/writes per token per layer
  StepTimes st;
  for (const auto& g : m.layers) {
    if (T <= 0) break;
    const double n = v(g.count);
    double params = 0, flops = 0, extra_bytes = 0, comm = 0;
    switch (g.type) {
      case LayerType::global_attention:
      case LayerType::sliding_attention:
        params = 2 * h * q * d / tp + 2 * h * kv_rank * d;
        flops = 2 * T * params;
        comm = allreduce_time(in, T * h * 2.0);
        break;
      case LayerType::mamba: {
        const double d_inner = v(g.heads) * v(g.head_dim), bc = 2 * v(g.groups) * v(g.state);
        params = (h * (2 * d_inner + bc + v(g.heads)) + (d_inner + bc) * v(g.conv) + d_inner * h) / tp;
        // EST: SSD chunked scan ~6 FLOPs per (token, channel, state element); state read + written per sequence
        flops = 2 * T * params + 6.0 * T * d_inner / tp * v(g.state);
        extra_bytes = 2.0 * seqs * (d_inner * v(g.state) * 4.0 + (d_inner + bc) * (v(g.conv) - 1) * 2.0) / tp;
        comm = allreduce_time(in, T * h * 2.0);
        break;
      }
      case LayerType::moe: {
        const double dim = v(g.latent) > 0 ? v(g.latent) : h;
        const double per_expert = (g.gated ? 3.0 : 2.0) * dim * v(g.intermediate);
        const double shards = in.par.ep > 1 ? in.par.ep : tp;
        const double T_group = in.par.ep > 1 ? T * dp : T;  // tokens that reach this GPU's experts
        const double E = v(g.experts), k = v(g.active);
        const double touched = 1.0 - std::pow(1.0 - k / E, T_group);  // expected share of experts used
        const double shared = (v(g.shared) * (g.gated ? 3.0 : 2.0) * h * v(g.shared_intermediate) +
                               (v(g.latent) > 0 ? 2 * h * v(g.latent) : 0.0)) / tp;
        params = E * touched * per_expert / shards + shared + h * E;
        flops = 2 * T_group * k * per_expert / shards + 2 * T * (shared + h * E);
        comm = allreduce_time(in, T * h * 2.0);
        if (in.par.ep > 1) {
          const double sent = 2.0 * (T / tp) * k * dim * 2.0 * (in.par.ep - 1.0) / in.par.ep;  // dispatch + combine
          comm += sent / link_Bps(in) + 2 * in.comm.collective_latency_us * 1e-6;
        }
        break;
      }
      case LayerType::mlp:
        params = (g.gated ? 3.0 : 2.0) * h * v(g.intermediate) / tp;
        flops = 2 * T * params;
        comm = allreduce_time(in, T * h * 2.0);
        break;
    }
    st.layers += n * roofline(params * b + act + extra_bytes, flops, kernels(g.type), in, F);
    st.weight_bytes += n * params * b;
    st.comm += n * comm;
  }
  if (logit_rows > 0) {
    const double params = v(m.vocab) * h / tp;
    st.lm_head = roofline(params * b + logit_rows * v(m.vocab) / tp * 4.0, 2 * logit_rows * params, 1, in, F);
    st.weight_bytes += params * b;
  }
  return st;
}

namespace {

Prediction attention(const PerfInputs& in, Phase phase, std::int64_t context, int batch, int positions) {
  if (phase == Phase::decode && positions > 1) phase = Phase::mtp;
  Point p;
  p.model = in.model->name;
  p.hardware = in.hw->name;
  p.geo = in.model->attn.per_rank(in.par.tp);
  p.cisa = in.cisa;
  p.work.phase = phase;
  p.work.context_tokens = context;
  p.work.batch = batch;
  p.work.prefill_tokens = positions;
  p.work.mtp_tokens = positions;
  if (phase != Phase::decode && phase != Phase::mtp) p.cisa.qshare_g = std::min(p.cisa.qshare_g, positions);
  validate_point(p);
  if (!in.pricing) throw std::logic_error("PerfInputs.pricing not set");
  return predict(p, *in.pricing);
}

}  // namespace

StepTimes decode_step(const PerfInputs& in, int batch, std::int64_t history, int positions) {
  if (positions < 1) throw std::invalid_argument("decode positions per sequence must be >= 1");
  const double T = static_cast<double>(batch) * positions;
  StepTimes st = layer_time(in, T, batch, T);
  const DeployModel& m = *in.model;
  const int n_global = m.count(LayerType::global_attention);
  if (n_global > 0) {
    const Prediction pr = attention(in, Phase::decode, history, batch, positions);
    st.attn_global_dense = n_global * pr.dense.busy();
    st.attn_global_cisa = n_global * pr.cisa.busy();
  }
  for (const auto& g : m.layers)
    if (g.type == LayerType::sliding_attention) {
      const std::int64_t ctx = std::min<std::int64_t>(history, static_cast<std::int64_t>(g.window.value));
      st.attn_sliding += g.n() * attention(in, Phase::decode, std::max<std::int64_t>(ctx, positions), batch, positions).dense.busy();
    }
  return st;
}

StepTimes prefill_sequence(const PerfInputs& in, std::int64_t L, int P) {
  if (P < 1) throw std::invalid_argument("prefill chunk must be >= 1");
  const DeployModel& m = *in.model;
  StepTimes st;
  const std::int64_t full = L / P, rest = L % P;
  if (full > 0) st.add(layer_time(in, P, 1, 0), static_cast<double>(full));
  if (rest > 0) st.add(layer_time(in, static_cast<double>(rest), 1, 0));
  st.add(layer_time(in, 0, 0, 1));  // LM head for the first output token
  const int n_global = m.count(LayerType::global_attention);
  if (n_global > 0) {
    const Prediction pr = attention(in, Phase::full_prefill, L, 1, static_cast<int>(std::min<std::int64_t>(P, L)));
    st.attn_global_dense = n_global * pr.dense.busy();
    st.attn_global_cisa = n_global * pr.cisa.busy();
  }
  for (const auto& g : m.layers) {
    if (g.type != LayerType::sliding_attention) continue;
    // Positions before the window attend causally to everything (a full prefill of min(L, w));
    // later positions attend to ~w tokens: blocks of p' = min(P, w/4) positions at history w + p'
    // (over-counts each position by at most p' tokens, <= 25% of the window).
    const std::int64_t w = static_cast<std::int64_t>(g.window.value);
    const std::int64_t head = std::min(L, w);
    double t = attention(in, Phase::full_prefill, head, 1, static_cast<int>(std::min<std::int64_t>(P, head))).dense.busy();
    if (L > w) {
      const std::int64_t pb = std::max<std::int64_t>(1, std::min<std::int64_t>(P, w / 4));
      const double blocks = static_cast<double>(L - w) / static_cast<double>(pb);
      t += blocks * attention(in, Phase::terminal_prefill, w + pb, 1, static_cast<int>(pb)).dense.busy();
    }
    st.attn_sliding += g.n() * t;
  }
  return st;
}

}  // namespace cisa::plan
