#include "cisa/plausibility.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>

namespace cisa {

namespace {

struct Range {
  double lo, hi;
  bool lo_open = false;  // lo < value (else lo <= value)
  const char* unit = "";
};

std::string show(double v) {
  std::ostringstream o;
  o.precision(15);
  o << v;
  return o.str();
}

std::string describe(const Range& r) {
  return std::string(r.lo_open ? "(" : "[") + show(r.lo) + ", " + show(r.hi) + "]" + (*r.unit ? " " : "") + r.unit;
}

bool inside(const Range& r, double v) { return (r.lo_open ? v > r.lo : v >= r.lo) && v <= r.hi; }

// Single-field ranges of the scenario keys (cross-field rules, such as G <= P, stay with the
// point: they depend on the sweep's combination).
const std::map<std::string, Range>& scenario_ranges() {
  static const std::map<std::string, Range> r = {
      {"chunk", {1, 4096, false, "tokens"}},
      {"window", {0, 2147483647, false, "pages"}},
      {"budget", {1, 1099511627776.0, false, "chunks"}},
      {"G", {1, 65536}},
      {"rep_dim", {0, 4096}},
      {"selection_overlap", {0, 1}},
      {"context", {1, 2147483648.0, false, "tokens"}},
      {"batch", {1, 65536}},
      {"prefill_tokens", {1, 2147483648.0, false, "tokens"}},
      {"mtp_tokens", {1, 64, false, "tokens"}},
      {"q_heads", {1, 65536}},
      {"kv_heads", {1, 65536}},
      {"head_dim", {8, 1024}},
      {"hidden", {1, 1048576}},
  };
  return r;
}

// Model and GPU figures (models/llm, models/gpu, models/deploy): generous bounds that catch unit
// mistakes (GB for bytes, 1e308) before they overflow the planner's integer results.
const std::map<std::string, Range>& figure_ranges() {
  static const std::map<std::string, Range> r = {
      {"hbm_bw_tbs", {0, 1000, true, "TB/s"}},
      {"bf16_tflops", {0, 1e6, true, "TFLOP/s"}},
      {"fp8_tflops", {0, 2e6, true, "TFLOP/s"}},
      {"hbm_gb", {0, 1e5, true, "GB"}},
      {"l2_mb", {0, 1e5, true, "MB"}},
      {"sms", {1, 1e5}},
      {"smem_per_sm_kb", {0, 1e5, true, "KB"}},
      {"nvlink_gbs", {0, 1e7, true, "GB/s"}},
      {"layers", {1, 1e5}},
      {"global_attn_layers", {0, 1e5}},
      {"hidden", {1, 1048576}},
      {"q_heads", {1, 65536}},
      {"kv_heads", {1, 65536}},
      {"head_dim", {1, 65536}},
      {"total_params_b", {0, 1e6, true, "billion"}},
      {"active_params_b", {0, 1e6, true, "billion"}},
      {"default_tp", {1, 65536}},
      {"vocab", {1, 1e8}},
      {"intermediate", {1, 1e8}},
  };
  return r;
}

}  // namespace

void check_scenario_value(const YamlDoc& doc, const std::string& key, const YAML::Node& value,
                          const std::string& field) {
  const auto it = scenario_ranges().find(key);
  if (it == scenario_ranges().end()) return;
  const double v = key == "selection_overlap" ? get_double(doc, value, field) : static_cast<double>(get_int(doc, value, field));
  if (!inside(it->second, v))
    throw InputError(locate(doc, value, field),
                     "must be in " + describe(it->second) + ", got " + value.Scalar() +
                         " (checked for every value given, also where a sweep overrides it)");
}

Figure checked_figure(const YamlDoc& doc, const YAML::Node& node, const std::string& key,
                      const std::string& field, const Figure& f) {
  if (std::isnan(f.value)) return f;  // .nan: not known (Figure::given() is false)
  if (std::isinf(f.value)) throw InputError(locate(doc, node, field), "must be a finite number, got " + show(f.value));
  const auto it = figure_ranges().find(key);
  if (it != figure_ranges().end() && !inside(it->second, f.value))
    throw InputError(locate(doc, node, field),
                     show(f.value) + " is outside the plausible range " + describe(it->second) + " (a unit mistake?)");
  return f;
}

void check_sweep_memory(std::size_t points, std::size_t shards, const std::string& file, double bytes_per_point) {
  const double rows = std::ceil(static_cast<double>(points) / static_cast<double>(shards ? shards : 1));
  const double need = rows * bytes_per_point;
  // CISA_MEMORY_BYTES: the memory to plan for, when not this machine's (a job's limit; tests).
  const char* env = std::getenv("CISA_MEMORY_BYTES");
  const double memory = env && std::atof(env) > 0
                            ? std::atof(env)
                            : static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  if (memory <= 0 || need <= memory / 2) return;
  const double shards_needed = std::ceil(static_cast<double>(points) * bytes_per_point / (memory / 2));
  throw InputError({file, 0, "sweep"}, show(rows) + " points need about " + show(std::round(need / 1e8) / 10) +
                                           " GB in memory (" + show(bytes_per_point / 1024) + " KB each), more than half of this machine's " +
                                           show(std::round(memory / 1e8) / 10) + " GB: run it in parts with --shard i/" +
                                           show(shards_needed) + " and join them with `cisa-sim merge`");
}

std::int64_t floor_to_i64(double v, const std::string& what) {
  if (!(v >= -9.2e18 && v <= 9.2e18))
    throw std::invalid_argument(what + " = " + show(v) + " is not representable; check the inputs' units");
  return static_cast<std::int64_t>(std::floor(v));
}

}  // namespace cisa
