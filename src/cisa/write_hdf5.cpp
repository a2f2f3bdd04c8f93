#include "cisa/write_hdf5.hpp"

#include <H5Cpp.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace cisa {

namespace {

H5::StrType utf8_vlen() {
  H5::StrType t(H5::PredType::C_S1, H5T_VARIABLE);
  t.setCset(H5T_CSET_UTF8);
  return t;
}

void write_string_attr(H5::H5Object& obj, const std::string& name, const std::string& value) {
  const H5::StrType t = utf8_vlen();
  H5::Attribute a = obj.createAttribute(name, t, H5::DataSpace(H5S_SCALAR));
  a.write(t, value);
}

std::string read_string_attr(const H5::H5Object& obj, const std::string& name) {
  H5::Attribute a = obj.openAttribute(name);
  std::string out;
  a.read(a.getStrType(), out);
  return out;
}

// Every element is written right after creation: skip HDF5's fill-value pass over the dataset.
H5::DSetCreatPropList no_fill() {
  H5::DSetCreatPropList p;
  H5Pset_fill_time(p.getId(), H5D_FILL_TIME_NEVER);
  return p;
}

void write_column(H5::Group& g, const Column& c) {
  const hsize_t n = c.size();
  H5::DataSpace space(1, &n);
  static const H5::DSetCreatPropList dcpl = no_fill();
  H5::DataSet ds;
  if (const auto* f = std::get_if<std::vector<double>>(&c.data)) {
    ds = g.createDataSet(c.name, H5::PredType::IEEE_F64LE, space, dcpl);
    if (n) ds.write(f->data(), H5::PredType::NATIVE_DOUBLE);
  } else if (const auto* i = std::get_if<std::vector<std::int64_t>>(&c.data)) {
    ds = g.createDataSet(c.name, H5::PredType::STD_I64LE, space, dcpl);
    if (n) ds.write(i->data(), H5::PredType::NATIVE_INT64);
  } else {
    // Fixed-length, null-padded UTF-8: an order of magnitude faster to write than
    // variable-length strings for million-row tables; h5py reads both with .asstr().
    const auto& s = std::get<std::vector<std::string>>(c.data);
    std::size_t width = 1;
    for (const auto& v : s) width = std::max(width, v.size());
    H5::StrType t(H5::PredType::C_S1, width);
    t.setCset(H5T_CSET_UTF8);
    t.setStrpad(H5T_STR_NULLPAD);
    ds = g.createDataSet(c.name, t, space, dcpl);
    std::vector<char> buf(s.size() * width, '\0');
    for (std::size_t k = 0; k < s.size(); ++k) std::memcpy(buf.data() + k * width, s[k].data(), s[k].size());
    if (n) ds.write(buf.data(), t);
  }
  write_string_attr(ds, "unit", c.unit);
  write_string_attr(ds, "description", c.description);
}

}  // namespace

void write_hdf5(const std::filesystem::path& path, const std::vector<Hdf5Group>& groups,
                const Attributes& attributes) {
  H5::Exception::dontPrint();
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  const std::filesystem::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  try {
    {
      // Track creation order so readers list columns in table order (C API: the C++ wrappers of
      // HDF5 1.10 lack these setters).
      const hid_t fcpl_id = H5Pcreate(H5P_FILE_CREATE);
      H5Pset_link_creation_order(fcpl_id, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
      const H5::FileCreatPropList fcpl(fcpl_id);
      H5::H5File file(tmp.string(), H5F_ACC_TRUNC, fcpl);
      H5::Group root = file.openGroup("/");
      for (const auto& [k, v] : attributes) write_string_attr(root, k, v);
      for (const auto& grp : groups) {
        grp.table->rows();  // throws on ragged columns before anything is named final
        const hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
        H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
        const hid_t gid = H5Gcreate2(file.getId(), grp.name.c_str(), H5P_DEFAULT, gcpl, H5P_DEFAULT);
        H5Pclose(gcpl);
        if (gid < 0) throw std::runtime_error("cannot create group /" + grp.name + " in " + tmp.string());
        H5::Group g(gid);
        for (const auto& c : grp.table->columns()) write_column(g, c);
      }
      file.close();
    }
    std::filesystem::rename(tmp, path);
  } catch (const H5::Exception& e) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error("cannot write HDF5 file " + path.string() + ": " + e.getDetailMsg());
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw;
  }
}

Attributes read_hdf5_attributes(const std::filesystem::path& path) {
  H5::Exception::dontPrint();
  Attributes out;
  try {
    H5::H5File file(path.string(), H5F_ACC_RDONLY);
    H5::Group root = file.openGroup("/");
    const int n = root.getNumAttrs();
    for (int i = 0; i < n; ++i) {
      H5::Attribute a = root.openAttribute(static_cast<unsigned>(i));
      const std::string name = a.getName();
      out[name] = read_string_attr(root, name);
    }
  } catch (const H5::Exception& e) {
    throw std::runtime_error("cannot read HDF5 attributes of " + path.string() + ": " + e.getDetailMsg());
  }
  return out;
}

Table read_hdf5_group(const std::filesystem::path& path, const std::string& group) {
  H5::Exception::dontPrint();
  Table t;
  try {
    H5::H5File file(path.string(), H5F_ACC_RDONLY);
    H5::Group g = file.openGroup(group);
    const hsize_t n = g.getNumObjs();
    for (hsize_t i = 0; i < n; ++i) {
      // Creation order when the file tracks it (ours do), else name order.
      std::string name;
      char buf[512];
      if (H5Lget_name_by_idx(g.getId(), ".", H5_INDEX_CRT_ORDER, H5_ITER_INC, i, buf, sizeof buf, H5P_DEFAULT) > 0)
        name = buf;
      else
        name = g.getObjnameByIdx(i);
      H5::DataSet ds = g.openDataSet(name);
      hsize_t len = 0;
      ds.getSpace().getSimpleExtentDims(&len);
      const std::string unit = read_string_attr(ds, "unit");
      const std::string desc = read_string_attr(ds, "description");
      switch (ds.getTypeClass()) {
        case H5T_FLOAT: {
          auto& v = t.add_f64(name, unit, desc);
          v.resize(len);
          if (len) ds.read(v.data(), H5::PredType::NATIVE_DOUBLE);
          break;
        }
        case H5T_INTEGER: {
          auto& v = t.add_i64(name, unit, desc);
          v.resize(len);
          if (len) ds.read(v.data(), H5::PredType::NATIVE_INT64);
          break;
        }
        case H5T_STRING: {
          auto& v = t.add_text(name, desc);
          const H5::StrType file_type = ds.getStrType();
          if (!file_type.isVariableStr()) {
            const std::size_t width = file_type.getSize();
            std::vector<char> cells(len * width);
            if (len) ds.read(cells.data(), file_type);
            for (std::size_t k = 0; k < len; ++k) {
              const char* p = cells.data() + k * width;
              v.emplace_back(p, strnlen(p, width));
            }
            break;
          }
          const H5::StrType st = utf8_vlen();
          std::vector<char*> ptrs(len, nullptr);
          if (len) ds.read(ptrs.data(), st);
          for (char* p : ptrs) v.emplace_back(p ? p : "");
#if H5_VERSION_GE(1, 12, 0)
          if (len) H5Treclaim(st.getId(), ds.getSpace().getId(), H5P_DEFAULT, ptrs.data());
#else
          if (len) H5Dvlen_reclaim(st.getId(), ds.getSpace().getId(), H5P_DEFAULT, ptrs.data());
#endif
          break;
        }
        default:
          throw std::runtime_error("unsupported dataset type for " + name);
      }
    }
  } catch (const H5::Exception& e) {
    throw std::runtime_error("cannot read group " + group + " of " + path.string() + ": " + e.getDetailMsg());
  }
  return t;
}

}  // namespace cisa
