#include "cisa/evaluate.hpp"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

#include <set>

#include "cisa/errors.hpp"
#include "model/pricing.hpp"
#include "cisa/results.hpp"
#include "cisa/version.hpp"
#include "design/design_eval.hpp"

namespace cisa {

Shard parse_shard(const std::string& text) {
  Shard s;
  const auto slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    std::size_t u1 = 0, u2 = 0;
    s.index = std::stoi(text.substr(0, slash), &u1);
    s.count = std::stoi(text.substr(slash + 1), &u2);
    if (u1 != slash || u2 != text.size() - slash - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw InputError({"command line", 0, "--shard"}, "expected i/N (e.g. 0/4), got '" + text + "'");
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count)
    throw InputError({"command line", 0, "--shard"}, "need 0 <= i < N, got '" + text + "'");
  return s;
}

Table evaluate_scenario(const Scenario& sc, const std::function<void(std::size_t, std::size_t)>& progress,
                        Shard shard) {
  Pricer pricer(sc.cards, sc.impls, sc.basis);
  PointsTableBuilder b(sc.design_column);
  b.reserve(sc.points.size());
  const std::size_t n = sc.points.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (!shard.takes(i)) continue;
    const Point& p = sc.points[i];
    const PointPricing& pr = pricer.for_point(p);
    const Prediction pred =
        p.design == "cisa" ? predict(p, pr)
                           : design::predict_design(p, pr, sc.designs.at(p.design), sc.design_equal_budget);
    b.add(static_cast<std::int64_t>(i), p, pred, pr.cisa[1].rates);
    if (progress && (i % 4096 == 4095 || i + 1 == n)) progress(i + 1, n);
  }
  return std::move(b.table());
}

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Attributes base_attributes(const std::string& command_line, const std::string& scenario_name, const std::string& file,
                           const std::string& text, const std::string& effective_yaml,
                           const std::vector<std::string>& overrides) {
  Attributes a;
  a["tool_version"] = tool_version();
  a["git_hash"] = git_hash();
  a["created_utc"] = utc_now_iso8601();
  a["command_line"] = command_line;
  a["scenario_name"] = scenario_name;
  a["scenario_file"] = file;
  a["scenario_yaml"] = text;
  a["scenario_effective_yaml"] = effective_yaml;
  std::string sets;
  for (const auto& s : overrides) sets += (sets.empty() ? "" : "\n") + s;
  a["scenario_overrides"] = sets;
  return a;
}

std::string implementation_figures(const ResolvedImpl& im) {
  std::string out = "# implementation " + im.name + "\n";
  for (const auto& u : im.used)
    out += fmt::format("{}: {{value: {:.6g}, label: {}, source: \"{}\"}}\n", u.field, u.figure.value,
                       to_string(u.figure.label()), u.figure.source);
  return out;
}

Attributes provenance(const Scenario& sc, const std::string& command_line, Shard shard) {
  Attributes a = base_attributes(command_line, sc.name, sc.file, sc.text, sc.effective_yaml, sc.overrides);
  a["basis"] = to_string(sc.basis);
  a["shard"] = std::to_string(shard.index) + "/" + std::to_string(shard.count);
  a["points_total"] = std::to_string(sc.points.size());
  Pricer pricer(sc.cards, sc.impls, sc.basis);
  std::string hw_yaml, hw_names;
  std::set<std::string> impl_names;
  for (const Point& p : sc.points) {
    const PointPricing& pr = pricer.for_point(p);
    for (const auto& d : pr.dense) impl_names.insert(p.hardware + "|" + d[1].impl);
    impl_names.insert(p.hardware + "|" + pr.cisa[1].impl);
  }
  for (const auto& key : impl_names) {
    const auto bar = key.find('|');
    const std::string card = key.substr(0, bar), impl = key.substr(bar + 1);
    a["implementation_figures." + card + "." + impl] = implementation_figures(pricer.resolved(card, impl));
    a["implementation_yaml." + impl] = sc.impls.at(impl).yaml;
  }
  for (const auto& [name, hw] : sc.gpus) {
    hw_yaml += "# --- " + name + "\n" + hw.yaml;
    hw_names += (hw_names.empty() ? "" : ",") + name;
    const Rates r = card_rates(hw, sc.basis);
    a["rates_source." + name] = r.source;
    if (sc.gpus.size() == 1) {
      a["hardware"] = name;
      a["hw_read_bw_tbs"] = fmt::format("{}", r.read_bw_Bps / 1e12);
      a["hw_bf16_tflops"] = fmt::format("{}", r.gemm_flops / 1e12);
      a["hw_launch_us"] = fmt::format("{}", r.launch_s * 1e6);
      a["hw_rates_source"] = r.source;
    }
  }
  if (sc.gpus.size() != 1) a["hardware"] = hw_names;
  if (sc.design_column) {  // issue 15: the designs pricing non-cisa points, as `cisa-sim designs` records them
    a["design_budget"] = sc.design_equal_budget ? "equal" : "own";
    for (const auto& [key, d] : sc.designs) {
      a["design_source." + d.name] = d.source;
      a["design_file." + d.name] = key;
    }
  }
  a["hardware_yaml"] = hw_yaml;
  a["byte_convention"] = "per global-attention layer, per forward, whole batch; DRAM bytes after the L2 model";
  a["uncertainty"] =
      "_lo/_hi columns: every figure at the fast / slow end of its band (explicit range; MEAS: half the recorded "
      "spread, 3-15 %; PUB 10 %; XFER 20 %; EST 30 %), unknown L2 sharing shared / none";
  return a;
}

}  // namespace cisa
