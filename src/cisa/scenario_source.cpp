#include "cisa/scenario_source.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "cisa/embedded.hpp"

namespace cisa {

namespace {

const std::string kDir = "scenarios/";

std::string kind_of(const std::string& name) {
  if (name.rfind("designs_", 0) == 0) return "designs";  // cisa-sim designs (src/design, issue 15)
  return name.rfind("plan_", 0) == 0 ? "plan" : "run";
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  std::iota(prev.begin(), prev.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// "scenarios/x.yaml", "x.yaml", "x" -> "x"
std::string stem_of(std::string s) {
  if (s.rfind("./", 0) == 0) s = s.substr(2);
  if (s.rfind(kDir, 0) == 0) s = s.substr(kDir.size());
  if (s.size() > 5 && s.substr(s.size() - 5) == ".yaml") s = s.substr(0, s.size() - 5);
  return s;
}

}  // namespace

std::vector<ShippedScenario> shipped_scenarios() {
  std::vector<ShippedScenario> out;
  for (const auto& name : embedded_yaml_names(kDir)) {
    ShippedScenario s{name, kind_of(name), ""};
    try {
      const YAML::Node root = YAML::Load(*embedded_text(kDir + name + ".yaml"));
      if (root.IsMap() && root["description"] && root["description"].IsScalar())
        s.description = root["description"].as<std::string>();
    } catch (const YAML::Exception&) {
      s.description = "(unreadable)";
    }
    out.push_back(s);
  }
  return out;
}

std::vector<std::string> closest_scenario_names(const std::string& word, const std::string& kind, std::size_t n) {
  std::vector<std::pair<std::size_t, std::string>> scored;
  const std::string w = stem_of(std::filesystem::path(word).filename().string());
  for (const auto& s : shipped_scenarios())
    if (s.kind == kind) {
      // A shared prefix or substring counts as close: "ultra" finds ultra_tp2_1m and ultra_tp2_sweep.
      const bool contains = !w.empty() && s.name.find(w) != std::string::npos;
      scored.push_back({contains ? 0 : edit_distance(w, s.name), s.name});
    }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && i < n; ++i) out.push_back(scored[i].second);
  return out;
}

YamlDoc resolve_scenario(const std::string& arg, const std::string& kind) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(arg, ec)) return load_yaml_file(arg);
  const std::string stem = stem_of(arg);
  if (stem.find('/') == std::string::npos && kind_of(stem) == kind) {
    const std::string path = kDir + stem + ".yaml";
    if (const auto text = embedded_text(path)) return parse_yaml(*text, "<embedded>/" + path);
  }
  std::string msg = "cannot open file '" + arg + "', and no shipped " + (kind == "plan" ? std::string("plan ") : "") +
                    "scenario has that name";
  const auto close = closest_scenario_names(arg, kind, 3);
  if (!close.empty()) {
    msg += "; closest shipped: ";
    for (std::size_t i = 0; i < close.size(); ++i) msg += (i ? ", " : "") + close[i];
  }
  msg += " (`cisa-sim scenarios` lists them with descriptions)";
  throw InputError({"command line", 0, "--scenario"}, msg);
}

}  // namespace cisa
