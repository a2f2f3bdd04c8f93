#include "cisa/yaml_util.hpp"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cisa {

YamlDoc parse_yaml(const std::string& text, const std::string& file) {
  YamlDoc doc;
  doc.file = file;
  doc.text = text;
  try {
    doc.root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError({file, e.mark.line + 1, ""}, "malformed YAML: " + e.msg);
  }
  if (!doc.root || doc.root.IsNull()) throw InputError({file, 1, ""}, "the file is empty");
  return doc;
}

YamlDoc load_yaml_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError({path, 0, ""}, "cannot open file (does it exist and is it readable?)");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_yaml(ss.str(), path);
}

SourceLocation locate(const YamlDoc& doc, const YAML::Node& node, const std::string& field) {
  for (const auto& key : doc.overridden)
    if (field == key || field.rfind(key + ".", 0) == 0 || field.rfind(key + "[", 0) == 0)
      return {"command line (--set " + key + ")", 0, field};
  const YAML::Mark m = node ? node.Mark() : YAML::Mark::null_mark();
  return {doc.file, m.line >= 0 ? m.line + 1 : 0, field};
}

void require_map(const YamlDoc& doc, const YAML::Node& node, const std::string& field) {
  if (!node.IsMap())
    throw InputError(locate(doc, node, field), "expected a mapping of key: value");
}

void require_keys_known(const YamlDoc& doc, const YAML::Node& map, const std::string& prefix,
                        const std::vector<std::string>& allowed) {
  require_map(doc, map, prefix.empty() ? "(top level)" : prefix);
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == key;
    if (ok) continue;
    std::string msg = "unknown key '" + key + "'";
    const std::string hint = did_you_mean(key, allowed);
    if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    msg += "; allowed here: " + list;
    throw InputError(locate(doc, kv.first, prefix.empty() ? key : prefix + "." + key), msg);
  }
}

namespace {
template <class T>
T convert(const YamlDoc& doc, const YAML::Node& node, const std::string& field, const char* what) {
  if (!node || !node.IsScalar())
    throw InputError(locate(doc, node, field), std::string("expected ") + what);
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    throw InputError(locate(doc, node, field),
                     std::string("expected ") + what + ", got '" + node.Scalar() + "'");
  }
}
}  // namespace

void apply_override(YamlDoc& doc, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError({"command line", 0, "--set"}, "expected key=value, got '" + assignment + "'");
  const std::string key = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::ParserException& e) {
    throw InputError({"command line", 0, key}, "cannot parse the value of --set " + key + ": " + e.msg);
  }
  std::vector<std::string> parts;
  std::stringstream ss(key);
  for (std::string part; std::getline(ss, part, '.');) parts.push_back(part);
  YAML::Node cur = doc.root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!cur[parts[i]] || !cur[parts[i]].IsMap()) cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
    cur.reset(cur[parts[i]]);
  }
  cur[parts.back()] = value;
  doc.overridden.push_back(key);
}

std::string apply_overrides(YamlDoc& doc, const std::vector<std::string>& assignments) {
  for (const auto& a : assignments) apply_override(doc, a);
  YAML::Emitter em;
  em << doc.root;
  return em.c_str();
}

std::int64_t get_int(const YamlDoc& doc, const YAML::Node& node, const std::string& field) {
  // Accept 1048576, 1e6-free integers and the common "1M"/"128K" shorthands for token counts.
  if (node && node.IsScalar()) {
    const std::string s = node.Scalar();
    if (!s.empty() && (s.back() == 'K' || s.back() == 'M' || s.back() == 'k' || s.back() == 'm')) {
      const std::int64_t mult = (s.back() == 'K' || s.back() == 'k') ? 1024 : 1024 * 1024;
      try {
        std::size_t used = 0;
        const long long v = std::stoll(s.substr(0, s.size() - 1), &used);
        if (used == s.size() - 1) return v * mult;
      } catch (const std::exception&) {
      }
      throw InputError(locate(doc, node, field), "expected an integer (e.g. 1048576 or 1M), got '" + s + "'");
    }
  }
  return convert<std::int64_t>(doc, node, field, "an integer");
}

double get_double(const YamlDoc& doc, const YAML::Node& node, const std::string& field) {
  return convert<double>(doc, node, field, "a number");
}

std::string get_string(const YamlDoc& doc, const YAML::Node& node, const std::string& field) {
  return convert<std::string>(doc, node, field, "a string");
}

bool get_bool(const YamlDoc& doc, const YAML::Node& node, const std::string& field) {
  return convert<bool>(doc, node, field, "true or false");
}

}  // namespace cisa
