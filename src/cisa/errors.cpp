#include "cisa/errors.hpp"

#include <algorithm>

namespace cisa {

std::string format_location(const SourceLocation& where) {
  std::string s = where.file.empty() ? std::string("command line") : where.file;
  if (where.line > 0) s += ":" + std::to_string(where.line);
  if (!where.field.empty()) s += ": field '" + where.field + "'";
  return s;
}

InputError::InputError(const SourceLocation& where, const std::string& what)
    : std::runtime_error(format_location(where) + ": " + what), where_(where) {}

namespace {
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

}  // namespace cisa
