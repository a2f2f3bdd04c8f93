// Reading YAML with errors that name file:line and the dotted field, and refuse unknown keys.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cisa/errors.hpp"

namespace cisa {

struct YamlDoc {
  std::string file;  // path or "<embedded:name>"
  std::string text;
  YAML::Node root;
  std::vector<std::string> overridden;  // dotted keys set from the command line (--set)
};

// Parses text; a syntax error becomes InputError at the error's line. So do a second document
// in the text, a duplicate key (naming both lines), a key that is not a plain scalar, nesting
// deeper than 200 levels and aliases that expand to more than 1e6 nodes.
YamlDoc parse_yaml(const std::string& text, const std::string& file);
// Missing or unreadable file, not a regular file (a FIFO, /dev/zero) or over 16 MiB -> InputError.
YamlDoc load_yaml_file(const std::string& path);
// A file named by field `field` (node `ref`) of `from`: a relative path is resolved against the
// folder of `from`'s file (then the working folder), and its errors read
// "from.yaml:LINE -> path:LINE: ...", so they say which line referenced the file.
YamlDoc load_referenced_yaml(const YamlDoc& from, const YAML::Node& ref, const std::string& field,
                             const std::string& path);

SourceLocation locate(const YamlDoc& doc, const YAML::Node& node, const std::string& field);

// Throws InputError naming the first key of `map` not in `allowed` (with a suggestion).
void require_keys_known(const YamlDoc& doc, const YAML::Node& map, const std::string& prefix,
                        const std::vector<std::string>& allowed);
void require_map(const YamlDoc& doc, const YAML::Node& node, const std::string& field);

// --set a.b.c=value: creates maps along the path (the value is parsed as YAML) and records the
// key so errors about it name the command line.
void apply_override(YamlDoc& doc, const std::string& assignment);
// Applies every override in order and returns the resulting document as YAML text.
std::string apply_overrides(YamlDoc& doc, const std::vector<std::string>& assignments);

std::int64_t get_int(const YamlDoc& doc, const YAML::Node& node, const std::string& field);
double get_double(const YamlDoc& doc, const YAML::Node& node, const std::string& field);
std::string get_string(const YamlDoc& doc, const YAML::Node& node, const std::string& field);
bool get_bool(const YamlDoc& doc, const YAML::Node& node, const std::string& field);

}  // namespace cisa
