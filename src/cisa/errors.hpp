// Errors caused by the user's input (exit code 2). The message names where the problem is
// (file:line, field) and what to do about it.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace cisa {

struct SourceLocation {
  std::string file;  // "" when the value came from the command line
  int line = 0;      // 1-based; 0 when unknown
  std::string field; // dotted path, e.g. "cisa.budget"
};

class InputError : public std::runtime_error {
 public:
  InputError(const SourceLocation& where, const std::string& what);
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
  const SourceLocation& where() const { return where_; }

 private:
  SourceLocation where_;
};

std::string format_location(const SourceLocation& where);

// Closest candidate by edit distance, or "" when nothing is close enough to suggest.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace cisa
