// Plausibility ranges for user inputs (issue 12): a value outside them is a typo or a unit
// mistake (hbm_gb: 1e308, cisa.G: 0), refused with exit 2 and the range in the message, before
// it can overflow the arithmetic downstream. Checked per value, so an invalid base value is an
// error even when a sweep overrides it.
#pragma once

#include <cstdint>
#include <string>

#include "model/figure.hpp"
#include "cisa/yaml_util.hpp"

namespace cisa {

// A scenario value (cisa:, workload:, geometry: or a sweep list item) of sweep key `key`.
void check_scenario_value(const YamlDoc& doc, const std::string& key, const YAML::Node& value,
                          const std::string& field);

// A model or GPU figure (key as in models/*.yaml): finite, and inside the key's range when the
// key has one. Returns the figure.
Figure checked_figure(const YamlDoc& doc, const YAML::Node& node, const std::string& key,
                      const std::string& field, const Figure& f);

// Refuses (InputError naming `file`, field sweep) a run whose table would not fit in memory:
// ceil(points / shards) rows at kBytesPerPoint each, against half of this machine's memory (or
// of $CISA_MEMORY_BYTES).
constexpr double kBytesPerPoint = 2048;  // measured 1.7 KB: 46,080 points, 97 MB max RSS vs 28 MB for 5,760
// Expanding a sweep (before any evaluation) holds every point and its de-duplication key: EST
// 512 B (sizeof(Point) plus a ~150-character key in a std::set node).
constexpr double kBytesPerExpandedPoint = 512;
void check_sweep_memory(std::size_t points, std::size_t shards, const std::string& file,
                        double bytes_per_point = kBytesPerPoint);

// floor(v) as int64, or std::invalid_argument naming `what` when it is not representable.
std::int64_t floor_to_i64(double v, const std::string& what);

}  // namespace cisa
