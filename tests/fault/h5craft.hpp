// Crafting foreign and malformed HDF5 files for the reader tests and the fuzz harness: any
// dataspace, datatype and attribute type, written with the plain C API (header-only).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace h5craft {

enum class Kind { f64, i64, f32, u8, fixed_str, vlen_str, compound, enum_, opaque, bitfield, array };

struct Spec {
  std::string name;
  Kind kind = Kind::f64;
  std::vector<hsize_t> dims = {4};  // empty: scalar dataspace
  bool chunked = false;             // chunked and never written (reads as fill values)
  bool unit_is_int = false;         // the "unit" attribute as an integer
};

inline hid_t make_type(Kind k) {
  switch (k) {
    case Kind::f64: return H5Tcopy(H5T_IEEE_F64LE);
    case Kind::i64: return H5Tcopy(H5T_STD_I64LE);
    case Kind::f32: return H5Tcopy(H5T_IEEE_F32LE);
    case Kind::u8: return H5Tcopy(H5T_STD_U8LE);
    case Kind::fixed_str: {
      hid_t t = H5Tcopy(H5T_C_S1);
      H5Tset_size(t, 7);
      return t;
    }
    case Kind::vlen_str: {
      hid_t t = H5Tcopy(H5T_C_S1);
      H5Tset_size(t, H5T_VARIABLE);
      return t;
    }
    case Kind::compound: {
      hid_t t = H5Tcreate(H5T_COMPOUND, 16);
      H5Tinsert(t, "a", 0, H5T_IEEE_F64LE);
      H5Tinsert(t, "b", 8, H5T_STD_I64LE);
      return t;
    }
    case Kind::enum_: {
      hid_t t = H5Tenum_create(H5T_STD_I32LE);
      int v = 0;
      H5Tenum_insert(t, "zero", &v);
      return t;
    }
    case Kind::opaque: return H5Tcreate(H5T_OPAQUE, 8);
    case Kind::bitfield: return H5Tcopy(H5T_STD_B64LE);
    case Kind::array: {
      const hsize_t n = 2;
      return H5Tarray_create2(H5T_IEEE_F64LE, 1, &n);
    }
  }
  return H5Tcopy(H5T_IEEE_F64LE);
}

inline void string_attr(hid_t obj, const char* name, const std::string& value) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  hid_t s = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
  const char* p = value.c_str();
  H5Awrite(a, t, &p);
  H5Aclose(a);
  H5Sclose(s);
  H5Tclose(t);
}

inline void int_attr(hid_t obj, const char* name, long long v) {
  hid_t s = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, H5T_STD_I64LE, s, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_LLONG, &v);
  H5Aclose(a);
  H5Sclose(s);
}

inline void dataset(hid_t g, const Spec& s) {
  hid_t space = s.dims.empty() ? H5Screate(H5S_SCALAR)
                               : H5Screate_simple(static_cast<int>(s.dims.size()), s.dims.data(), nullptr);
  hid_t t = make_type(s.kind);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (s.chunked && !s.dims.empty()) {
    std::vector<hsize_t> chunk(s.dims.size(), 1);
    H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data());
  }
  hid_t ds = H5Dcreate2(g, s.name.c_str(), t, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  hsize_t n = 1;
  for (hsize_t d : s.dims) n *= d;
  if (!s.chunked && n < (1u << 20)) {
    const std::size_t size = H5Tget_size(t);
    if (s.kind == Kind::i64 || s.kind == Kind::u8) {  // distinct values (point_index)
      std::vector<long long> v(n);
      for (hsize_t k = 0; k < n; ++k) v[k] = static_cast<long long>(k);
      H5Dwrite(ds, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
    } else if (s.kind == Kind::f64 || s.kind == Kind::f32) {
      std::vector<double> v(n);
      for (hsize_t k = 0; k < n; ++k) v[k] = static_cast<double>(k);
      H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
    } else if (s.kind == Kind::vlen_str) {
      std::vector<const char*> p(n, "x");
      H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, p.data());
    } else {
      std::vector<unsigned char> buf(n * size, 1);
      H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data());
    }
  }
  if (s.unit_is_int)
    int_attr(ds, "unit", 3);
  else
    string_attr(ds, "unit", "ms");
  string_attr(ds, "description", "crafted");
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Tclose(t);
  H5Sclose(space);
}

// A file with group `group` holding `columns`; root attributes given as strings, plus
// `int_attrs` as integers.
inline bool write_file(const std::string& path, const std::string& group, const std::vector<Spec>& columns,
                       const std::vector<std::pair<std::string, std::string>>& attrs = {},
                       const std::vector<std::string>& int_attrs = {}) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) return false;
  for (const auto& [k, v] : attrs) string_attr(f, k.c_str(), v);
  for (const auto& k : int_attrs) int_attr(f, k.c_str(), 7);
  hid_t g = H5Gcreate2(f, group.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  for (const auto& c : columns) dataset(g, c);
  H5Gclose(g);
  return H5Fclose(f) >= 0;
}

}  // namespace h5craft
