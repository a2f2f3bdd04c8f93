// Shared CLI plumbing: exit codes, error reporting, list parsing, progress bar.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cisa::cli {

constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;

// Runs body; maps InputError / program_options errors to exit 2 and other exceptions to exit 1,
// printing "cisa-sim <cmd>: error: ..." on stderr.
int guarded(const std::string& cmd, const std::function<int()>& body);

// "8192,4096" or "1M,512K" -> values; throws InputError naming the option.
std::vector<std::int64_t> parse_int_list(const std::string& option, const std::string& text);

std::string join_args(int argc, char** argv);

// Where a run writes when --out is not given: out/<scenario name>.h5 under the current folder
// (git-ignored in the repository), so a user's run never rewrites a committed result.
std::string default_output(const std::string& scenario_name);

// Progress on stderr when it is a terminal and the work takes longer than a second.
class Progress {
 public:
  explicit Progress(std::string what);
  void operator()(std::size_t done, std::size_t total);
  ~Progress();

 private:
  std::string what_;
  double start_;
  bool tty_;
  bool shown_ = false;
};

}  // namespace cisa::cli
