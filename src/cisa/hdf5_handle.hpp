// Owning HDF5 identifiers for the C API, and the error text of HDF5's error stack. Every call's
// return is checked: check() throws with the stack's innermost messages (and the OS error when
// the failure was an I/O one, e.g. "No space left on device").
#pragma once

#include <hdf5.h>

#include <string>
#include <utility>

namespace cisa::h5 {

// HDF5's error stack as one line ("" when empty); clears the stack. Sets *os_errno to the errno
// the file driver reported, when it reported one.
std::string take_error_text(int* os_errno = nullptr);

// A failed HDF5 write of `target`: throws OutputError with the OS error when the file driver
// reported one (ENOSPC, EFBIG, EIO), else with `detail` and HDF5's messages.
[[noreturn]] void write_failed(const std::string& target, const std::string& detail);

// Silences HDF5's own printing of errors (we report them ourselves).
void quiet();

class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)), closer_(o.closer_) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
      closer_ = o.closer_;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now and returns the HDF5 status (< 0: failed; the handle then stays open, for the
  // destructor to try again). Idempotent.
  herr_t close() {
    if (id_ < 0 || !closer_) return 0;
    const herr_t s = closer_(id_);
    if (s >= 0) id_ = H5I_INVALID_HID;
    return s;
  }

 private:
  void reset() {
    if (id_ >= 0 && closer_ && closer_(id_) < 0)
      H5Eclear2(H5E_DEFAULT);  // error path: already reported
    id_ = H5I_INVALID_HID;
  }
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

inline Handle file(hid_t id) {
  return {id, H5Fclose};
}
inline Handle group(hid_t id) {
  return {id, H5Gclose};
}
inline Handle dataset(hid_t id) {
  return {id, H5Dclose};
}
inline Handle space(hid_t id) {
  return {id, H5Sclose};
}
inline Handle type(hid_t id) {
  return {id, H5Tclose};
}
inline Handle attribute(hid_t id) {
  return {id, H5Aclose};
}
inline Handle plist(hid_t id) {
  return {id, H5Pclose};
}

}  // namespace cisa::h5
