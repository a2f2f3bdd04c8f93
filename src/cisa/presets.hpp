// Model and GPU presets: YAML files under models/, embedded in the binary. Every number keeps
// its source string.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/hardware.hpp"
#include "model/implementation.hpp"
#include "model/types.hpp"
#include "cisa/yaml_util.hpp"

namespace cisa {

struct ModelPreset {
  std::string name;
  std::string display_name;
  Figure layers, global_attn_layers, hidden, q_heads, kv_heads, head_dim;
  Figure total_params_b, active_params_b, default_tp;
  std::string yaml;

  // Per-rank attention geometry at tensor parallelism `tp`: query heads split evenly; KV heads
  // split while tp <= kv_heads and replicated (one per rank) beyond. Throws std::invalid_argument.
  Geometry per_rank(int tp) const;
};

std::vector<std::string> model_preset_names();
std::vector<std::string> gpu_preset_names();
ModelPreset model_preset(const std::string& name);  // InputError if unknown (with suggestion)
Hardware gpu_preset(const std::string& name);

// A preset reference in a scenario: an inline mapping, a path to a YAML file, or a preset name
// (errors on a name point at the referring field).
template <class T, class Parse, class ByName>
T resolve_preset(const YamlDoc& doc, const YAML::Node& n, const std::string& field, Parse parse, ByName by_name) {
  if (n.IsMap()) return parse(doc, n, field);
  const std::string s = get_string(doc, n, field);
  if (s.find('/') != std::string::npos || (s.size() > 5 && s.substr(s.size() - 5) == ".yaml")) {
    const YamlDoc file = load_referenced_yaml(doc, n, field, s);  // beside the scenario; errors name its line
    return parse(file, file.root, "");
  }
  try {
    return by_name(s);
  } catch (const InputError& e) {
    throw InputError(locate(doc, n, field), e.what());
  }
}
Hardware resolve_hardware(const YamlDoc& doc, const YAML::Node& n, const std::string& field);
ModelPreset resolve_model(const YamlDoc& doc, const YAML::Node& n, const std::string& field);

// A sourced number: `key: 1.5` or `key: {value: 1.5, source: "..."}`. When the key is absent,
// `absent` is returned if given, else it is an InputError naming the field.
Figure read_figure(const YamlDoc& doc, const YAML::Node& map, const std::string& key, const std::string& prefix,
                   const std::optional<Figure>& absent = std::nullopt);

// Parse a preset from a YAML mapping (an embedded file, a user file or a scenario's inline block).
ModelPreset parse_model(const YamlDoc& doc, const YAML::Node& node, const std::string& prefix);
Hardware parse_hardware(const YamlDoc& doc, const YAML::Node& node, const std::string& prefix);

// Implementation profiles (models/impl/*.yaml, embedded).
std::vector<std::string> impl_preset_names();
ImplProfile impl_preset(const std::string& name);  // InputError if unknown (with suggestion)
ImplProfile parse_impl(const YamlDoc& doc, const YAML::Node& node, const std::string& prefix);
ImplCatalog shipped_impls();  // every shipped profile
CardCatalog shipped_cards();  // every shipped GPU preset (transfer sources)

}  // namespace cisa
