#include "cisa/output_file.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <mutex>
#include <system_error>

#include "cisa/errors.hpp"

namespace cisa {

namespace fs = std::filesystem;

void throw_os_error(const std::string& what, const fs::path& file, int err) {
  throw OutputError(what + " " + file.string() + ": " + std::strerror(err) +
                    " (nothing replaced: an older file of that name is unchanged)");
}

namespace {

// ---- temp files removed on SIGINT / SIGTERM / SIGHUP / SIGPIPE ----
// Fixed storage: the handler may only call async-signal-safe functions (unlink, sigaction, raise).
constexpr int kSlots = 16;
char g_paths[kSlots][PATH_MAX];
volatile sig_atomic_t g_used[kSlots];
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

extern "C" void remove_temps_and_die(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_used[i]) ::unlink(g_paths[i]);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);  // delivered with the default action when the handler returns
}

void install_handlers_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : kSignals) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN)
        continue;  // keep nohup etc.
      struct sigaction sa {};
      sa.sa_handler = remove_temps_and_die;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

// Blocks the cleanup signals while the slot table changes.
class SignalBlock {
 public:
  SignalBlock() {
    sigset_t s;
    sigemptyset(&s);
    for (int sig : kSignals) sigaddset(&s, sig);
    ::pthread_sigmask(SIG_BLOCK, &s, &old_);
  }
  ~SignalBlock() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  SignalBlock(const SignalBlock&) = delete;
  SignalBlock& operator=(const SignalBlock&) = delete;

 private:
  sigset_t old_;
};

int register_temp(const fs::path& p) {
  install_handlers_once();
  const std::string s = p.string();
  if (s.size() >= PATH_MAX) return -1;
  SignalBlock block;
  for (int i = 0; i < kSlots; ++i) {
    if (g_used[i]) continue;
    std::memcpy(g_paths[i], s.c_str(), s.size() + 1);
    g_used[i] = 1;
    return i;
  }
  return -1;  // more than kSlots files at once: still removed on exceptions, not on signals
}

void unregister_temp(int slot) {
  if (slot < 0) return;
  SignalBlock block;
  g_used[slot] = 0;
}

std::string temp_marker(const fs::path& target) {
  return target.filename().string() + ".tmp-cisa.";
}

// Removes temps of `target` whose writer process is gone (killed with -9, machine crash).
// Also the names of earlier versions ("<name>.tmp.<pid>").
void remove_stale_temps(const fs::path& target) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefixes[] = {temp_marker(target), target.filename().string() + ".tmp."};
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    for (const auto& prefix : prefixes) {
      if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
      const std::string rest = name.substr(prefix.size());
      const std::string digits = rest.substr(0, rest.find('.'));
      if (digits.empty() || digits.size() > 9 ||
          digits.find_first_not_of("0123456789") != std::string::npos)
        continue;
      const pid_t pid = static_cast<pid_t>(std::stol(digits));
      if (pid == ::getpid()) continue;
      if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // its writer may still be running
      std::error_code rm;
      if (it->is_regular_file(rm)) fs::remove(it->path(), rm);
      break;
    }
  }
}

// Follows a chain of symlinks to the file that should be replaced.
fs::path follow_links(const fs::path& name, const std::string& option) {
  fs::path p = name;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::error_code ec;
    const fs::path link = fs::read_symlink(p, ec);
    if (ec) return p;
    p = link.is_absolute() ? link : p.parent_path() / link;
  }
  throw InputError({"command line", 0, option},
                   "'" + name.string() + "': too many levels of symbolic links");
}

void fsync_path(const fs::path& p, int flags, bool is_folder) {
  const int fd = ::open(p.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw_os_error("cannot open", p, errno);
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    // Some file systems cannot fsync a folder (EINVAL); the rename itself has been done.
    if (!(is_folder && (err == EINVAL || err == ENOTSUP))) throw_os_error("cannot flush", p, err);
    return;
  }
  if (::close(fd) != 0) throw_os_error("cannot flush", p, errno);
}

std::atomic<unsigned> g_sequence{0};

}  // namespace

std::string sanitize_file_name(const std::string& text) {
  std::string out;
  for (char ch : text) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
    out += ok ? ch : '_';
  }
  const auto first = out.find_first_not_of('.');
  out = first == std::string::npos ? "" : out.substr(first);
  if (out.size() > 160) out.resize(160);
  return out.empty() ? "unnamed" : out;
}

OutputTarget check_output(const std::string& name, const std::string& option, bool stdout_ok) {
  const SourceLocation where{"command line", 0, option};
  if (name == "-") {
    if (stdout_ok) return {name, {}, true};
    throw InputError(where,
                     "this output is HDF5, which needs a seekable file: give a file name, not '-'");
  }
  if (name.empty()) throw InputError(where, "empty file name");
  if (name.back() == '/')
    throw InputError(where, "'" + name + "' names a folder; give a file name");
  const fs::path p = follow_links(name, option);
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      throw InputError(where, "'" + name + "' is a folder; give a file name inside it");
    if (!S_ISREG(st.st_mode))
      throw InputError(where, "'" + name +
                                  "' is not a regular file (a FIFO, device or socket); cisa-sim "
                                  "only replaces regular files" +
                                  std::string(stdout_ok ? " (use '-' for stdout)" : ""));
  }
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw InputError(where, "cannot create the folder of '" + name + "' (" + dir.string() +
                                "): " + (ec ? ec.message() : std::string("not a folder")));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError(where, "cannot write into the folder of '" + name + "' (" + dir.string() +
                                "): " + std::strerror(errno));
  return {name, p, false};
}

OutputFile::OutputFile(const std::string& target, const std::string& option) {
  target_ = check_output(target, option, false).path;
  remove_stale_temps(target_);
  temp_ = target_;
  temp_.replace_filename(temp_marker(target_) + std::to_string(::getpid()) + "." +
                         std::to_string(g_sequence++));
  slot_ = register_temp(temp_);
}

OutputFile::~OutputFile() {
  if (committed_) return;
  ::unlink(temp_.c_str());
  unregister_temp(slot_);
}

void OutputFile::commit() {
  struct stat old {};
  if (::stat(target_.c_str(), &old) == 0 && S_ISREG(old.st_mode))
    ::chmod(temp_.c_str(), old.st_mode & 07777);
  fsync_path(temp_, O_RDONLY, false);
  if (::rename(temp_.c_str(), target_.c_str()) != 0)
    throw_os_error("cannot rename the finished file to", target_, errno);
  committed_ = true;
  unregister_temp(slot_);
  fsync_path(target_.has_parent_path() ? target_.parent_path() : fs::path("."),
             O_RDONLY | O_DIRECTORY, true);
}

void write_text_output(const std::string& target, const std::string& text,
                       const std::string& option) {
  if (target == "-") {
    std::cout << text << std::flush;
    if (!std::cout) throw OutputError("cannot write to stdout");
    return;
  }
  OutputFile out(target, option);
  const int fd = ::open(out.temp().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw_os_error("cannot create", out.temp(), errno);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      throw_os_error("cannot write", out.target(), err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) throw_os_error("cannot write", out.target(), errno);
  out.commit();
}

}  // namespace cisa
