// cisa-sim report FILE.h5 [--out DIR]: renders the figures, tables and index.md of one result
// file by running analysis/report.py with a python3 that has numpy, h5py and matplotlib.
//
// Finding the scripts: $CISA_ANALYSIS_DIR, else <CISA_SOURCE_DIR>/analysis (compile
// definition), else analysis/ or share/cisa-sim/analysis/ next to or above the executable.
// Finding python: $CISA_PYTHON, else python3 on PATH, /usr/bin/python3, /usr/local/bin/python3;
// the first one that imports the three modules is used.
// Exit codes: 0 success, 2 bad input / python or a module missing, 1 the script failed.
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "commands.hpp"

namespace cisa::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kScript = "report.py";
constexpr const char* kModules[] = {"numpy", "h5py", "matplotlib"};

struct ProcessResult {
  int exit_code = -1;  // exit status; 128+signal when killed; 127 when exec failed
  std::string output;  // stdout + stderr when captured
};

// Runs argv[0] (a path) with the given arguments, without a shell. When `capture` is set the
// child's stdout and stderr are collected instead of inherited.
ProcessResult run_process(const std::vector<std::string>& args, bool capture) {
  ProcessResult result;
  std::vector<char*> cargs;
  cargs.reserve(args.size() + 1);
  for (const auto& a : args) cargs.push_back(const_cast<char*>(a.c_str()));
  cargs.push_back(nullptr);

  int fds[2] = {-1, -1};
  if (capture && ::pipe(fds) != 0) {
    result.output = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.output = std::string("fork: ") + std::strerror(errno);
    if (capture) {
      ::close(fds[0]);
      ::close(fds[1]);
    }
    return result;
  }
  if (pid == 0) {
    if (capture) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::dup2(fds[1], STDERR_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
    }
    ::execv(cargs[0], cargs.data());
    std::fprintf(stderr, "cannot run %s: %s\n", cargs[0], std::strerror(errno));
    ::_exit(127);
  }
  if (capture) {
    ::close(fds[1]);
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n > 0) {
        result.output.append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        break;
      }
    }
    ::close(fds[0]);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return result;
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

bool is_executable_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::optional<fs::path> find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) dir = ".";
    const fs::path candidate = fs::path(dir) / name;
    if (is_executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

fs::path executable_dir(const char* argv0) {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) {
    exe = fs::path(argv0 == nullptr ? "" : argv0);
    if (exe.has_parent_path()) {
      exe = fs::absolute(exe, ec);
    } else if (auto found = find_in_path(exe.string())) {
      exe = *found;
    }
  }
  return exe.parent_path();
}

// Where analysis/report.py lives; an error message when it cannot be found.
std::optional<fs::path> find_analysis_dir(const char* argv0, std::string& error) {
  std::error_code ec;
  const std::string env = env_or_empty("CISA_ANALYSIS_DIR");
  if (!env.empty()) {
    if (fs::is_regular_file(fs::path(env) / kScript, ec)) return fs::path(env);
    error = "CISA_ANALYSIS_DIR=" + env + " does not contain " + kScript;
    return std::nullopt;
  }
  std::vector<fs::path> tried;
#ifdef CISA_SOURCE_DIR
  tried.push_back(fs::path(CISA_SOURCE_DIR) / "analysis");
#endif
  fs::path dir = executable_dir(argv0);
  for (int up = 0; up < 5 && !dir.empty(); ++up) {
    tried.push_back(dir / "analysis");
    tried.push_back(dir / "share" / "cisa-sim" / "analysis");
    if (dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  for (const auto& d : tried) {
    if (fs::is_regular_file(d / kScript, ec)) return d;
  }
  error = std::string("cannot find analysis/") + kScript + " (looked in";
  for (const auto& d : tried) error += " " + d.string();
  error += "); set CISA_ANALYSIS_DIR to the project's analysis/ folder";
  return std::nullopt;
}

// Returns the missing modules of `python` (empty: all present); nullopt if it does not run.
std::optional<std::string> missing_modules(const fs::path& python) {
  std::string code =
      "import importlib.util, sys\n"
      "m = [n for n in (";
  for (const char* mod : kModules) code += std::string("'") + mod + "', ";
  code +=
      ") if importlib.util.find_spec(n) is None]\n"
      "print('CISA_MISSING:' + ' '.join(m))\n";
  const ProcessResult r = run_process({python.string(), "-c", code}, true);
  const auto pos = r.output.find("CISA_MISSING:");
  if (r.exit_code != 0 || pos == std::string::npos) return std::nullopt;
  std::string missing = r.output.substr(pos + std::strlen("CISA_MISSING:"));
  while (!missing.empty() && (missing.back() == '\n' || missing.back() == '\r' ||
                              missing.back() == ' ')) {
    missing.pop_back();
  }
  return missing;
}

// The python3 to use; prints why not and returns nullopt when none is usable.
std::optional<fs::path> find_python() {
  std::vector<fs::path> candidates;
  const std::string env = env_or_empty("CISA_PYTHON");
  if (!env.empty()) {
    fs::path p(env);
    if (!p.has_parent_path()) {
      if (auto found = find_in_path(env)) p = *found;
    }
    candidates.push_back(p);
  } else {
    if (auto p = find_in_path("python3")) candidates.push_back(*p);
    candidates.emplace_back("/usr/bin/python3");
    candidates.emplace_back("/usr/local/bin/python3");
  }
  std::vector<std::string> problems;
  std::vector<fs::path> seen;
  for (const auto& c : candidates) {
    if (!is_executable_file(c)) {
      if (!env.empty()) problems.push_back("CISA_PYTHON=" + env + " is not an executable file");
      continue;
    }
    std::error_code ec;
    const fs::path canon = fs::canonical(c, ec);
    bool duplicate = false;
    for (const auto& s : seen) duplicate = duplicate || (!ec && s == canon);
    if (duplicate) continue;
    if (!ec) seen.push_back(canon);
    const auto missing = missing_modules(c);
    if (!missing) {
      problems.push_back(c.string() + " does not run");
    } else if (missing->empty()) {
      return c;
    } else {
      problems.push_back(c.string() + " lacks the module(s): " + *missing);
    }
  }
  if (problems.empty()) {
    std::cerr << "cisa-sim report: python3 not found (PATH, /usr/bin, /usr/local/bin)\n";
  } else {
    std::cerr << "cisa-sim report: no usable python3:\n";
    for (const auto& p : problems) std::cerr << "  " << p << "\n";
  }
  std::cerr << "  install the modules with scripts/install-deps.sh, or: apt-get install python3 "
               "python3-numpy python3-h5py python3-matplotlib;\n"
               "  or set CISA_PYTHON to a python3 that has numpy, h5py and matplotlib\n";
  return std::nullopt;
}

}  // namespace

int cmd_report(int argc, char** argv) {
  std::string file;
  std::string out;
  std::string formats;
  po::options_description visible(
      "Usage: cisa-sim report FILE.h5 [--out DIR]\n"
      "Renders every applicable figure (PNG + SVG), the markdown tables and an index.md for a\n"
      "cisa-sim HDF5 result file, by running analysis/report.py (python3 with numpy, h5py,\n"
      "matplotlib).\n\n"
      "Environment: CISA_ANALYSIS_DIR (folder holding report.py), CISA_PYTHON (interpreter).\n\n"
      "Options");
  visible.add_options()("help,h", "show this help")(
      "out,o", po::value<std::string>(&out),
      "output folder (default results/report_<stem>/)")(
      "formats", po::value<std::string>(&formats)->default_value("png,svg"),
      "comma-separated figure formats");
  po::options_description all;
  all.add(visible).add_options()("file", po::value<std::string>(&file), "result file");
  po::positional_options_description positional;
  positional.add("file", 1);

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "cisa-sim report: " << e.what() << "\n" << visible << "\n";
    return 2;
  }
  if (vm.count("help") != 0U) {
    std::cout << visible << "\n";
    return 0;
  }
  if (file.empty()) {
    std::cerr << "cisa-sim report: missing FILE.h5\n" << visible << "\n";
    return 2;
  }
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    std::cerr << "cisa-sim report: " << file << ": no such file\n";
    return 2;
  }
  if (out.empty()) {
    out = (fs::path("out") / ("report_" + fs::path(file).stem().string())).string();
  }

  std::string error;
  const auto analysis_dir = find_analysis_dir(argc > 0 ? argv[0] : nullptr, error);
  if (!analysis_dir) {
    std::cerr << "cisa-sim report: " << error << "\n";
    return 2;
  }
  const auto python = find_python();
  if (!python) return 2;

  const ProcessResult r = run_process(
      {python->string(), (*analysis_dir / kScript).string(), file, "--out", out, "--formats",
       formats},
      false);
  if (r.exit_code == 0) return 0;
  if (r.exit_code == 2) return 2;  // bad input, already explained by the script
  if (r.exit_code < 0) {
    std::cerr << "cisa-sim report: could not run " << python->string() << ": " << r.output
              << "\n";
  } else {
    std::cerr << "cisa-sim report: " << kScript << " failed (exit " << r.exit_code << ")\n";
  }
  return 1;
}

}  // namespace cisa::cli
