// Preset and scenario files compiled into the binary (models/**.yaml, scenarios/*.yaml).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cisa {

struct EmbeddedFile {
  const char* path;  // relative to the source tree, e.g. "models/gpu/h200_sxm.yaml"
  const char* text;
};

const std::vector<EmbeddedFile>& embedded_files();  // generated at build time
std::optional<std::string> embedded_text(const std::string& path);
// Names (file stems) of the embedded .yaml files directly named "<dir><stem>.yaml", e.g. dir "models/gpu/".
std::vector<std::string> embedded_yaml_names(const std::string& dir);

}  // namespace cisa
