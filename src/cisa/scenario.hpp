// Scenario files: YAML with model, hardware, cisa settings, workload and a sweep. Loading checks
// every key (unknown keys are errors with a suggestion) and expands the sweep into points.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "design/design.hpp"
#include "model/hardware.hpp"
#include "model/implementation.hpp"
#include "model/point.hpp"

namespace cisa {

struct Scenario {
  std::string name;
  std::string description;
  std::string file;            // path, or "<embedded>/scenarios/<name>.yaml"
  std::string text;            // the scenario file as given
  std::vector<std::string> overrides;  // --set key=value, in order
  std::string effective_yaml;  // the scenario after overrides, as YAML
  Basis basis = Basis::calibrated;
  std::map<std::string, Hardware> gpus;  // every GPU the points use, by name
  CardCatalog cards;                     // every known card (transfer sources) and the scenario's own
  ImplCatalog impls;                     // implementation profiles: shipped and the scenario's files
  std::vector<Point> points;
  std::size_t duplicates_collapsed = 0;  // e.g. decode points that differ only in G
  // --measure inputs: "random" (Gaussian K/V/Q) or "planted" (round(selection_overlap x K) pages
  // per sequence get keys aligned with every index query, so neighbouring selections share them).
  std::string measure_inputs = "random";
  // Sparse-attention designs (issue 15): `design: NAME|FILE` and a `design` sweep axis. Points with
  // design "cisa" use the CISA model unchanged; others are priced by src/design's traffic model.
  std::map<std::string, design::Design> designs;  // by Point::design (as written in the scenario)
  bool design_equal_budget = true;  // design_budget: equal (K x c tokens each) | own (each design's)
  bool design_column = false;       // the scenario names a design: /points gets a `design` column
};

// `source` is a file path; "" loads the embedded default scenario (ultra_tp2_1m).
// `sets` are "dotted.key=value" overrides applied before validation.
Scenario load_scenario(const std::string& source, const std::vector<std::string>& sets);

std::string default_scenario_path();  // "scenarios/ultra_tp2_1m.yaml"

}  // namespace cisa
