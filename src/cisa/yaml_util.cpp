#include "cisa/yaml_util.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cisa {

namespace {

constexpr std::uintmax_t kMaxInputBytes = 16u << 20;
constexpr int kMaxDepth = 200;
constexpr std::size_t kMaxNodes = 1'000'000;

int line_of(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

// Duplicate keys (yaml-cpp keeps the first, PyYAML the last: the two would disagree), keys that
// are not plain scalars, and documents too deep or too large once aliases are expanded.
class Checker {
 public:
  explicit Checker(const std::string& file) : file_(file) {}
  void walk(const YAML::Node& n, int depth, const std::string& path) {
    if (++nodes_ > kMaxNodes)
      throw InputError({file_, line_of(n), path}, "the document expands to more than 1e6 nodes (aliases?)");
    if (depth > kMaxDepth) throw InputError({file_, line_of(n), path}, "nested deeper than 200 levels");
    if (n.IsSequence()) {
      for (std::size_t i = 0; i < n.size(); ++i) walk(n[i], depth + 1, path + "[" + std::to_string(i) + "]");
    } else if (n.IsMap()) {
      std::map<std::string, int> seen;
      for (const auto& kv : n) {
        if (!kv.first.IsScalar())
          throw InputError({file_, line_of(kv.first), path}, "a key must be a plain name, not a list or mapping");
        const std::string key = kv.first.Scalar();
        const std::string field = path.empty() ? key : path + "." + key;
        const auto [it, fresh] = seen.emplace(key, line_of(kv.first));
        if (!fresh)
          throw InputError({file_, line_of(kv.first), field},
                           "duplicate key '" + key + "' (first at line " + std::to_string(it->second) +
                               "); give each key once");
        walk(kv.second, depth + 1, field);
      }
    }
  }

 private:
  std::string file_;
  std::size_t nodes_ = 0;
};

}  // namespace

// The line of a second document's start ("---" or content after "..."), 0 when there is one
// document; `first` gets the first document's first line. (Not YAML::LoadAll: yaml-cpp 0.7
// loops forever on some malformed input there, e.g. a line ", b", found by fuzz_scenario.)
static int second_document_line(const std::string& text, int* first) {
  std::istringstream in(text);
  int line = 0;
  bool content = false, ended = false;
  *first = 0;
  for (std::string l; std::getline(in, l);) {
    ++line;
    if (!l.empty() && l.back() == '\r') l.pop_back();
    const auto nb = l.find_first_not_of(" \t");
    if (nb == std::string::npos || l[nb] == '#' || (!content && l[0] == '%')) continue;
    const bool start = l.rfind("---", 0) == 0 && (l.size() == 3 || l[3] == ' ' || l[3] == '\t');
    const bool end = l.rfind("...", 0) == 0 && (l.size() == 3 || l[3] == ' ' || l[3] == '\t');
    if (start) {
      if (content || ended) return line;
      if (!*first) *first = line;
      content = true;
      continue;
    }
    if (end) {
      ended = true;
      continue;
    }
    if (ended) return line;
    if (!*first) *first = line;
    content = true;
  }
  return 0;
}

YamlDoc parse_yaml(const std::string& text, const std::string& file) {
  YamlDoc doc;
  doc.file = file;
  doc.text = text;
  try {
    doc.root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError({file, e.mark.line + 1, ""}, "malformed YAML: " + e.msg);
  }
  int first = 0;
  if (const int second = second_document_line(text, &first))
    throw InputError({file, second, ""},
                     "a second YAML document (the first starts at line " + std::to_string(first) +
                         "); a scenario or preset file holds one document: remove the '---' line");
  if (!doc.root || doc.root.IsNull()) throw InputError({file, 1, ""}, "the file is empty");
  Checker(file).walk(doc.root, 0, "");
  return doc;
}

YamlDoc load_yaml_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError({path, 0, ""}, std::string("cannot open file (does it exist and is it readable?): ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw InputError({path, 0, ""}, "not a regular file (a folder, FIFO or device)");
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxInputBytes)
    throw InputError({path, 0, ""}, "the file has " + std::to_string(st.st_size) + " bytes; YAML inputs are limited to 16 MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, ""}, "cannot open file (does it exist and is it readable?)");
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad()) throw InputError({path, 0, ""}, "cannot read file");
  return parse_yaml(text, path);
}

YamlDoc load_referenced_yaml(const YamlDoc& from, const YAML::Node& ref, const std::string& field,
                             const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p = path;
  const bool from_file = !from.file.empty() && from.file[0] != '<' && from.file.find(" -> ") == std::string::npos;
  if (p.is_relative() && from_file) {
    const fs::path beside = fs::path(from.file).parent_path() / p;
    std::error_code ec;
    if (fs::exists(beside, ec) || !fs::exists(p, ec)) p = beside;  // beside the scenario first
  }
  const SourceLocation at = locate(from, ref, field);
  const std::string via = format_location({at.file, at.line, ""});
  try {
    YamlDoc doc = load_yaml_file(p.string());
    doc.file = via + " -> " + p.string();
    return doc;
  } catch (const InputError& e) {
    throw InputError(at, std::string("in the referenced file: ") + e.what());
  }
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
  Checker("command line (--set " + key + ")").walk(value, 0, key);  // as a file's values are checked
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
        std::int64_t product = 0;
        if (used == s.size() - 1 && !__builtin_mul_overflow(v, mult, &product)) return product;
        if (used == s.size() - 1)
          throw InputError(locate(doc, node, field), "'" + s + "' does not fit in a 64-bit integer");
      } catch (const std::logic_error&) {  // stoll: not a number, or out of range
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
