// The one way cisa-sim writes a file (HDF5, CSV, text, YAML): never a half-written or corrupt
// file at the target path, whatever happens (kill -9, full disk, SIGPIPE, Ctrl-C).
//
//   1. check_output(): the target must be a regular file, a symlink to one (its target is the
//      file replaced), or not exist yet; "-" is stdout where the format allows. A folder, FIFO,
//      device or socket is refused (InputError, exit 2), as is a folder we cannot write.
//   2. OutputFile: everything is written to "<name>.tmp-cisa.<pid>.<n>" in the target's folder.
//      commit() fsyncs it, renames it over the target and fsyncs the folder; only then may the
//      caller say "wrote". The destructor of an uncommitted OutputFile removes the temp file, so
//      does SIGINT, SIGTERM, SIGHUP or SIGPIPE; temps left by a killed (-9) writer of the same
//      target are removed by the next writer.
//   3. Write failures (ENOSPC, EFBIG, EIO, ...) throw OutputError with the OS error; the old file
//      is untouched.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace cisa {

// A file could not be written (the message names the file and the OS error). Exit code 1.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OutputTarget {
  std::string shown;           // as the user named it
  std::filesystem::path path;  // the file replaced (symlinks followed); empty for stdout
  bool to_stdout = false;
};

// Validates `name` (given with command-line option `option`, e.g. "--out") before any work is
// done. Creates missing parent folders. Throws InputError (exit 2) for a bad target.
OutputTarget check_output(const std::string& name, const std::string& option, bool stdout_ok);

// A file name derived from user text (e.g. a scenario's `name:`): anything but [A-Za-z0-9._-]
// becomes '_', leading dots are dropped, so it cannot name another folder or a hidden file.
std::string sanitize_file_name(const std::string& text);

class OutputFile {
 public:
  // Starts a write to check_output(target, option, false).path.
  explicit OutputFile(const std::string& target, const std::string& option = "--out");
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  const std::filesystem::path& temp() const { return temp_; }      // write here
  const std::filesystem::path& target() const { return target_; }  // replaced by commit()
  // fsync(temp), rename(temp, target), fsync(folder). Throws OutputError.
  void commit();

 private:
  std::filesystem::path target_, temp_;
  int slot_ = -1;  // signal-cleanup registration
  bool committed_ = false;
};

// Writes `text` to `target` through an OutputFile, or to stdout when target is "-".
void write_text_output(const std::string& target, const std::string& text,
                       const std::string& option = "--out");

// "cannot write <file>: <strerror(err)>" as an OutputError.
[[noreturn]] void throw_os_error(const std::string& what, const std::filesystem::path& file,
                                 int err);

}  // namespace cisa
