#include "cisa/hdf5_handle.hpp"

#include <cstdlib>
#include <cstring>

#include "cisa/output_file.hpp"

namespace cisa::h5 {

namespace {

struct Collected {
  std::string text;
  int os_errno = 0;
};

herr_t collect(unsigned /*n*/, const H5E_error2_t* e, void* data) {
  auto* c = static_cast<Collected*>(data);
  const char* desc = e->desc ? e->desc : "";
  // The sec2 driver reports "... errno = 28, error message = 'No space left on device' ...".
  if (const char* p = std::strstr(desc, "errno = ")) {
    const int v = std::atoi(p + 8);
    if (v > 0 && c->os_errno == 0) c->os_errno = v;
  }
  if (*desc && c->text.find(desc) == std::string::npos) {
    if (!c->text.empty()) c->text += "; ";
    c->text += desc;
  }
  return 0;
}

}  // namespace

std::string take_error_text(int* os_errno) {
  Collected c;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect, &c);  // innermost (most specific) first
  H5Eclear2(H5E_DEFAULT);
  if (c.text.size() > 600) c.text = c.text.substr(0, 600) + " ...";
  if (os_errno) *os_errno = c.os_errno;
  return c.text.empty() ? "unknown HDF5 error" : c.text;
}

void write_failed(const std::string& target, const std::string& detail) {
  int err = 0;
  const std::string text = take_error_text(&err);
  if (err > 0) throw_os_error("cannot write", target, err);
  throw OutputError("cannot write " + target + ": " + detail + ": " + text +
                    " (nothing replaced: an older file of that name is unchanged)");
}

void quiet() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

}  // namespace cisa::h5
