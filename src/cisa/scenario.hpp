// Scenario files: YAML with model, hardware, cisa settings, workload and a sweep. Loading checks
// every key (unknown keys are errors with a suggestion) and expands the sweep into points.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "design/design.hpp"
#include "model/hardware.hpp"
#include "model/implementation.hpp"
#include "model/point.hpp"

namespace cisa {

// A sweep expanded lazily: its distinct points in order, one at a time, without holding them.
// Axes vary in order (last fastest); a later axis setting a key overrides an earlier one; decode
// has G = 1 and mtp G = mtp_tokens. A point equal to an earlier one (same values as the scenario
// keys render them) is a duplicate and skipped: exactly the first of each set of equal points is
// kept, in sweep order. The de-duplication needs no memory: the keys an axis owns (no later axis
// sets them) decide its part of the point, so a point is the first of its kind iff every axis
// index is the first value of its axis with the same owned keys (G not counted when the point's
// phase is decode or mtp).
class Sweep {
 public:
  using Setter = std::function<void(Point&)>;
  struct Set {
    std::string key;  // sweep key: "context", "G", "hardware", ...
    Setter apply;
  };
  Point base;
  std::vector<std::vector<std::vector<Set>>> axes;  // axis -> value index -> settings (zip: several)
  std::vector<std::string> axis_fields;             // "sweep.context", "sweep.zip", ... (messages)

  // Builds the de-duplication tables; call after the axes are final (and before Cursor).
  void prepare();
  std::size_t tuples() const;  // the Cartesian product, duplicates included

  // Walks the sweep's tuples in order.
  class Cursor {
   public:
    explicit Cursor(const Sweep& s);
    // A cursor whose first next_tuple() gives tuple `first` (in sweep order; < tuples()).
    Cursor(const Sweep& s, std::size_t first);
    // The next tuple into p (storage reused); kept = false for a duplicate. False at the end.
    bool next_tuple(Point& p, bool& kept);
    // The next distinct point into p; false at the end.
    bool next(Point& p);
    const std::vector<std::size_t>& index() const { return idx_; }  // of the last tuple

   private:
    const Sweep* s_;
    std::vector<std::size_t> idx_;
    Point raw_;  // base with every axis applied, before the phase's G
    bool started_ = false, done_ = false;
  };

  // One point per distinct (hardware, dense_impl, cisa_impl) of the sweep, in order of first
  // appearance (other fields from the first point having it).
  std::vector<Point> impl_triples() const;
  // The distinct renderings (as in the de-duplication key) a scenario key takes over the sweep.
  std::vector<std::string> values_of(const std::string& key) const;

 private:
  friend class Cursor;
  bool kept(const std::vector<std::size_t>& idx, const Point& raw) const;
  int owner(const std::string& key) const;  // last axis setting key; -1: the base
  std::vector<std::array<std::vector<std::size_t>, 2>> first_equal_;  // axis -> [G counted, not] -> value -> first equal
};

// Most tuples a sweep may have (Sweep::tuples() saturates at SIZE_MAX).
constexpr std::size_t kMaxSweepTuples = 1'000'000'000;

// A decode point has one position (G = 1); an mtp point shares its k tokens (G = k).
void normalize_phase_g(Point& p);
// The rendering of one scenario key of a point in the de-duplication key ("G": qshare_g).
std::string render_key(const Point& p, const std::string& key);

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
  Sweep sweep;                      // the points, lazily (always set)
  std::size_t point_count = 0;      // distinct points of the sweep
  std::vector<Point> points;        // the same points, held (only when loaded with expand = true)
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
// `sets` are "dotted.key=value" overrides applied before validation. Every point is validated;
// `expand` also holds them in Scenario::points (else only Scenario::sweep expands them, lazily).
Scenario load_scenario(const std::string& source, const std::vector<std::string>& sets, bool expand = true);

// The distinct points, held (what load_scenario(..., expand = true) puts in Scenario::points).
std::vector<Point> expand_points(const Sweep& sweep);

std::string default_scenario_path();  // "scenarios/ultra_tp2_1m.yaml"

}  // namespace cisa
