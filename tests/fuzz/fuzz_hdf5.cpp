// libFuzzer harness: the HDF5 readers (read_hdf5_attributes, read_hdf5_group) and the checks of
// merge/--measurements on what they return. First byte even: the rest is the file's bytes (the
// corpus holds files written by write_hdf5). Odd: the bytes describe a file to craft (columns
// of any rank, length and datatype, attributes of any type), so the readers' validation is
// explored beyond what byte mutations of a checksummed file reach.
#include "../fault/h5craft.hpp"
#include "cisa/write_hdf5.hpp"
#include "fuzz_common.hpp"

namespace {

std::string crafted(const std::uint8_t* d, std::size_t n) {
  std::vector<h5craft::Spec> cols;
  std::size_t i = 0;
  auto next = [&]() -> unsigned { return i < n ? d[i++] : 0u; };
  const unsigned count = next() % 6;
  for (unsigned c = 0; c < count; ++c) {
    h5craft::Spec s;
    s.name = c == 0 ? "point_index" : "c" + std::to_string(next() % 4);
    s.kind = static_cast<h5craft::Kind>(next() % 11);
    const unsigned rank = next() % 3;
    s.dims.clear();
    for (unsigned r = 0; r < rank; ++r) s.dims.push_back(next() % 9);
    const unsigned flags = next();
    s.chunked = (flags & 1) && !s.dims.empty() && s.dims[0] > 0;
    s.unit_is_int = flags & 2;
    cols.push_back(s);
  }
  const std::string path = fuzz::scratch(".crafted.h5", d, 0);
  std::vector<std::string> int_attrs;
  if (next() & 1) int_attrs.push_back("points_total");
  h5craft::write_file(path, next() & 1 ? "points" : "other", cols, {{"tool_version", "fuzz"}}, int_attrs);
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 65536) return 0;
  const std::string path = (data[0] & 1) ? crafted(data + 1, size - 1) : fuzz::scratch(".h5", data + 1, size - 1);
  return fuzz::expect_ok_or_input_error([&] {
    (void)cisa::read_hdf5_attributes(path);
    const cisa::Table t = cisa::read_hdf5_group(path, "points");
    (void)t.rows();  // throws std::logic_error (a finding) unless the columns have equal lengths
  });
}
