#include "model/types.hpp"

#include <stdexcept>

namespace cisa {

double dtype_bytes(Dtype d) { return d == Dtype::bf16 ? 2.0 : 1.0; }

std::string to_string(Dtype d) { return d == Dtype::bf16 ? "bf16" : "fp8"; }
std::string to_string(RepKind k) { return k == RepKind::mean ? "mean" : "minmax"; }
std::string to_string(ScoreAgg a) {
  switch (a) {
    case ScoreAgg::sum: return "sum";
    case ScoreAgg::max: return "max";
    case ScoreAgg::last: return "last";
  }
  return "?";
}
std::string to_string(Phase p) {
  switch (p) {
    case Phase::terminal_prefill: return "terminal_prefill";
    case Phase::full_prefill: return "full_prefill";
    case Phase::decode: return "decode";
    case Phase::mtp: return "mtp";
  }
  return "?";
}

Dtype parse_dtype(const std::string& s) {
  if (s == "bf16") return Dtype::bf16;
  if (s == "fp8") return Dtype::fp8;
  throw std::invalid_argument("unknown dtype '" + s + "' (expected bf16 or fp8)");
}
RepKind parse_rep_kind(const std::string& s) {
  if (s == "mean") return RepKind::mean;
  if (s == "minmax") return RepKind::minmax;
  throw std::invalid_argument("unknown representative kind '" + s + "' (expected mean or minmax)");
}
ScoreAgg parse_score_agg(const std::string& s) {
  if (s == "sum") return ScoreAgg::sum;
  if (s == "max") return ScoreAgg::max;
  if (s == "last") return ScoreAgg::last;
  throw std::invalid_argument("unknown score aggregation '" + s + "' (expected sum, max or last)");
}
Phase parse_phase(const std::string& s) {
  if (s == "terminal_prefill") return Phase::terminal_prefill;
  if (s == "full_prefill") return Phase::full_prefill;
  if (s == "decode") return Phase::decode;
  if (s == "mtp") return Phase::mtp;
  throw std::invalid_argument("unknown phase '" + s +
                              "' (expected terminal_prefill, full_prefill, decode or mtp)");
}

int effective_qshare(const CisaConfig& cfg, const Workload& w) {
  switch (w.phase) {
    case Phase::decode: return 1;
    case Phase::mtp: return w.mtp_tokens;
    default: return cfg.qshare_g;
  }
}

int positions_per_forward(const Workload& w) {
  switch (w.phase) {
    case Phase::decode: return 1;
    case Phase::mtp: return w.mtp_tokens;
    default: return w.prefill_tokens;
  }
}

}  // namespace cisa
