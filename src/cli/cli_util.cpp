#include "cli/cli_util.hpp"

#include <unistd.h>

#include <boost/program_options/errors.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cisa/errors.hpp"
#include "cisa/output_file.hpp"

namespace cisa::cli {

namespace {
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

int guarded(const std::string& cmd, const std::function<int()>& body) {
  const std::string who = cmd.empty() ? "cisa-sim" : "cisa-sim " + cmd;
  try {
    return body();
  } catch (const InputError& e) {
    std::cerr << who << ": error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const boost::program_options::error& e) {
    std::cerr << who << ": error: command line: " << e.what() << " (see " << who << " --help)\n";
    return kExitBadInput;
  } catch (const OutputError& e) {  // the OS refused a write (full disk, EIO, ...): not our bug
    std::cerr << who << ": error: " << e.what() << "\n";
    // HDF5 1.10 keeps a file whose final flush failed open and crashes closing it at exit
    // (H5F__close_cb): leave without running its exit handlers. The temp file is already removed.
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(kExitInternal);
  } catch (const std::exception& e) {
    std::cerr << who << ": internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

std::vector<std::int64_t> parse_int_list(const std::string& option, const std::string& text) {
  std::vector<std::int64_t> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::int64_t mult = 1;
    std::string digits = item;
    if (!digits.empty() && (digits.back() == 'K' || digits.back() == 'k')) mult = 1024, digits.pop_back();
    else if (!digits.empty() && (digits.back() == 'M' || digits.back() == 'm')) mult = 1024 * 1024, digits.pop_back();
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(digits, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (digits.empty() || used != digits.size() || v < 1)
      throw InputError({"command line", 0, "--" + option},
                       "expected a comma-separated list of positive integers (e.g. 8192,4096 or 1M), got '" + text + "'");
    std::int64_t product = 0;
    if (__builtin_mul_overflow(static_cast<std::int64_t>(v), mult, &product))
      throw InputError({"command line", 0, "--" + option}, "'" + item + "' does not fit in a 64-bit integer");
    out.push_back(product);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::string join_args(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

// The name is sanitised: `name: ../../x` must not write outside out/.
std::string default_output(const std::string& scenario_name) { return "out/" + sanitize_file_name(scenario_name) + ".h5"; }

Progress::Progress(std::string what) : what_(std::move(what)), start_(now_s()), tty_(isatty(2) != 0) {}

void Progress::operator()(std::size_t done, std::size_t total) {
  if (!tty_) return;
  const double el = now_s() - start_;
  if (el < 1.0 && !shown_) return;
  shown_ = true;
  const double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const int width = 30, fill = static_cast<int>(frac * width);
  const double eta = frac > 0 ? el * (1.0 - frac) / frac : 0.0;
  std::fprintf(stderr, "\r%s [%.*s%*s] %3.0f%% %zu/%zu, %.1f s, ETA %.1f s ", what_.c_str(), fill,
               "##############################", width - fill, "", frac * 100.0, done, total, el, eta);
  std::fflush(stderr);
}

Progress::~Progress() {
  if (shown_) std::fprintf(stderr, "\n");
}

}  // namespace cisa::cli
