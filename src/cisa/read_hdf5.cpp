// The validating readers of write_hdf5.hpp. Nothing read is trusted: every dataset's kind, rank,
// length and type and every attribute's type is checked before memory is sized from it.
#include <sys/stat.h>

#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cisa/errors.hpp"
#include "cisa/hdf5_handle.hpp"
#include "cisa/write_hdf5.hpp"

namespace cisa {

namespace {

namespace fs = std::filesystem;
using h5::Handle;

constexpr hsize_t kMaxStringWidth = 1 << 20;
constexpr hsize_t kMaxRows = hsize_t{1} << 27;  // above the 5e7-point sweep limit

class Reader {
 public:
  // small_cache: a metadata cache of at most 1 MiB (HDF5's default starts at 2 MiB a file): a
  // merge holds every shard open at once.
  explicit Reader(const fs::path& path, bool small_cache = false) : file_(path.string()) {
    h5::quiet();
    struct stat st {};
    if (::stat(file_.c_str(), &st) != 0)
      bad("", std::string("cannot open: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) bad("", "not a regular file");
    const htri_t is = H5Fis_hdf5(file_.c_str());
    if (is <= 0)
      bad("", "not an HDF5 file (or a truncated or corrupt one): " + h5::take_error_text());
    Handle fapl;
    if (small_cache) {
      fapl = h5::plist(check(H5Pcreate(H5P_FILE_ACCESS), "", "H5Pcreate"));
      H5AC_cache_config_t mdc{};
      mdc.version = H5AC__CURR_CACHE_CONFIG_VERSION;
      check(H5Pget_mdc_config(fapl.get(), &mdc), "", "H5Pget_mdc_config");
      mdc.set_initial_size = true;
      mdc.initial_size = 256 * 1024;
      mdc.min_size = 128 * 1024;
      mdc.max_size = 1024 * 1024;
      check(H5Pset_mdc_config(fapl.get(), &mdc), "", "H5Pset_mdc_config");
    }
    f_ = h5::file(H5Fopen(file_.c_str(), H5F_ACC_RDONLY, small_cache ? fapl.get() : H5P_DEFAULT));
    if (!f_.valid())
      bad("", "cannot open as HDF5 (truncated or corrupt?): " + h5::take_error_text());
  }

  [[noreturn]] void bad(const std::string& field, const std::string& what) const {
    throw InputError({file_, 0, field}, what);
  }
  hid_t check(hid_t v, const std::string& field, const char* what) const {
    if (v < 0) bad(field, std::string(what) + ": " + h5::take_error_text());
    return v;
  }

  hid_t file() const { return f_.get(); }

  // A string attribute (scalar or one element, fixed or variable length).
  std::string string_attribute(hid_t obj, const std::string& name, const std::string& field) const {
    Handle a = h5::attribute(
        check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), field, "cannot open attribute"));
    Handle t = h5::type(check(H5Aget_type(a.get()), field, "cannot read attribute type"));
    if (H5Tget_class(t.get()) != H5T_STRING) bad(field, "attribute is not a string");
    Handle sp = h5::space(check(H5Aget_space(a.get()), field, "cannot read attribute space"));
    if (H5Sget_simple_extent_npoints(sp.get()) != 1) bad(field, "attribute must hold one string");
    const htri_t vlen = H5Tis_variable_str(t.get());
    if (vlen < 0) bad(field, "cannot read attribute type: " + h5::take_error_text());
    if (vlen) {
      Handle mt = h5::type(check(H5Tcopy(H5T_C_S1), field, "H5Tcopy"));
      check(H5Tset_size(mt.get(), H5T_VARIABLE), field, "H5Tset_size");
      check(H5Tset_cset(mt.get(), H5Tget_cset(t.get())), field,
            "H5Tset_cset");  // HDF5 converts no charsets
      char* p = nullptr;
      check(H5Aread(a.get(), mt.get(), &p), field, "cannot read attribute");
      std::string out = p ? p : "";
      H5free_memory(p);
      return out;
    }
    const std::size_t width = H5Tget_size(t.get());
    if (width == 0 || width > kMaxStringWidth) bad(field, "attribute string width out of range");
    std::vector<char> buf(width + 1, '\0');
    check(H5Aread(a.get(), t.get(), buf.data()), field, "cannot read attribute");
    return std::string(buf.data(), strnlen(buf.data(), width));
  }

 private:
  std::string file_;
  Handle f_;
};

std::string link_name(const Reader& r, hid_t g, hsize_t i, const std::string& field) {
  for (H5_index_t order : {H5_INDEX_CRT_ORDER, H5_INDEX_NAME}) {
    const ssize_t n = H5Lget_name_by_idx(g, ".", order, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (n <= 0) {
      h5::take_error_text();  // files that do not track creation order: name order
      continue;
    }
    std::string name(static_cast<std::size_t>(n) + 1, '\0');
    if (H5Lget_name_by_idx(g, ".", order, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT) <
        0)
      break;
    name.resize(static_cast<std::size_t>(n));
    return name;
  }
  r.bad(field, "cannot list the group: " + h5::take_error_text());
}

// One column's dataset, checked (inspect_column) before any of its data is read.
struct ColumnMeta {
  std::string name, field, unit, desc;
  Handle ds;
  H5T_class_t cls = H5T_NO_CLASS;
  std::size_t size = 0;  // bytes a cell (fixed-length strings: the width)
  bool vlen = false;     // variable-length strings
  bool as_fill = false;  // never written: every row reads as its user-defined fill value
  hsize_t len = 0;
};

// Checks one column against the expected row count (or sets it): kind, rank, length, type,
// storage, attributes. Leaves the dataset open in the result.
ColumnMeta inspect_column(const Reader& r, hid_t g, const std::string& name, const std::string& field,
                          std::optional<hsize_t>& rows) {
  ColumnMeta m;
  m.name = name;
  m.field = field;
  H5O_info_t info{};
#if H5_VERSION_GE(1, 12, 0)
  r.check(H5Oget_info_by_name3(g, name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT), field,
          "cannot inspect");
#else
  r.check(H5Oget_info_by_name2(g, name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT), field,
          "cannot inspect");
#endif
  if (info.type != H5O_TYPE_DATASET)
    r.bad(field, "is not a dataset (every member of the group must be a column)");
  m.ds = h5::dataset(r.check(H5Dopen2(g, name.c_str(), H5P_DEFAULT), field, "cannot open dataset"));
  Handle sp = h5::space(r.check(H5Dget_space(m.ds.get()), field, "cannot read dataspace"));
  if (H5Sget_simple_extent_type(sp.get()) != H5S_SIMPLE ||
      H5Sget_simple_extent_ndims(sp.get()) != 1)
    r.bad(field, "must be a 1-D dataset (a column), has rank " +
                     std::to_string(H5Sget_simple_extent_ndims(sp.get())));
  hsize_t len = 0;
  r.check(H5Sget_simple_extent_dims(sp.get(), &len, nullptr), field, "cannot read dimensions");
  if (len > kMaxRows) r.bad(field, "implausible length " + std::to_string(len));
  if (rows && *rows != len)
    r.bad(field, "has " + std::to_string(len) + " rows, the group's first column has " +
                     std::to_string(*rows) + " (columns must have equal lengths)");
  rows = len;
  m.len = len;
  Handle ft = h5::type(r.check(H5Dget_type(m.ds.get()), field, "cannot read datatype"));
  m.cls = H5Tget_class(ft.get());
  m.size = H5Tget_size(ft.get());
  // Contiguous data must be present in full: a header claiming more rows than the file holds is
  // corrupt.
  if (m.cls != H5T_STRING || H5Tis_variable_str(ft.get()) == 0) {
    Handle dcpl = h5::plist(r.check(H5Dget_create_plist(m.ds.get()), field, "cannot read layout"));
    // A dataset never written holds no storage and reads as its fill value (the writer stores a
    // column with one value in every row that way): valid when the fill value is the writer's.
    H5D_space_status_t status = H5D_SPACE_STATUS_ERROR;
    H5D_fill_value_t fill = H5D_FILL_VALUE_ERROR;
    m.as_fill = H5Dget_space_status(m.ds.get(), &status) >= 0 && status == H5D_SPACE_STATUS_NOT_ALLOCATED &&
                H5Pfill_value_defined(dcpl.get(), &fill) >= 0 && fill == H5D_FILL_VALUE_USER_DEFINED;
    if (H5Pget_layout(dcpl.get()) == H5D_CONTIGUOUS && len > 0 && !m.as_fill &&
        (m.size == 0 || len > std::numeric_limits<hsize_t>::max() / m.size ||
         H5Dget_storage_size(m.ds.get()) < len * m.size))
      r.bad(field, "holds fewer bytes than its " + std::to_string(len) +
                       " rows need (truncated or corrupt)");
  }
  m.unit = H5Aexists(m.ds.get(), "unit") > 0
               ? r.string_attribute(m.ds.get(), "unit", field + " (attribute unit)")
               : "";
  m.desc = H5Aexists(m.ds.get(), "description") > 0
               ? r.string_attribute(m.ds.get(), "description", field + " (attribute description)")
               : "";
  if (m.cls == H5T_FLOAT) {
    if (m.size != 4 && m.size != 8)
      r.bad(field, "float of " + std::to_string(m.size) + " bytes; expected float32 or float64");
  } else if (m.cls == H5T_INTEGER) {
    if (m.size < 1 || m.size > 8) r.bad(field, "integer of " + std::to_string(m.size) + " bytes");
  } else if (m.cls == H5T_STRING) {
    m.vlen = H5Tis_variable_str(ft.get()) > 0;
    if (!m.vlen && (m.size == 0 || m.size > kMaxStringWidth))
      r.bad(field, "string width " + std::to_string(m.size) + " out of range");
  } else {
    r.bad(field, "unsupported datatype (class " + std::to_string(static_cast<int>(m.cls)) +
                     "); columns are float64, int64 or strings");
  }
  return m;
}

// An empty column of m's kind in t.
void add_column(Table& t, const ColumnMeta& m) {
  if (m.cls == H5T_FLOAT) t.add_f64(m.name, m.unit, m.desc);
  else if (m.cls == H5T_INTEGER) t.add_i64(m.name, m.unit, m.desc);
  else t.add_text(m.name, m.desc);
}

// Rows [begin, begin + n) of m's dataset into `data` (replaced), as float64, int64 or strings.
void read_rows(const Reader& r, const ColumnMeta& m, hsize_t begin, hsize_t n, decltype(Column::data)& data) {
  const std::size_t count = static_cast<std::size_t>(n);
  // The whole column: H5S_ALL (one read); a range: a hyperslab of the file's rows.
  Handle fsp, msp;
  hid_t file_space = H5S_ALL, mem_space = H5S_ALL;
  if (n && (begin != 0 || n != m.len)) {
    fsp = h5::space(r.check(H5Dget_space(m.ds.get()), m.field, "cannot read dataspace"));
    r.check(H5Sselect_hyperslab(fsp.get(), H5S_SELECT_SET, &begin, nullptr, &n, nullptr), m.field,
            "cannot select rows");
    msp = h5::space(r.check(H5Screate_simple(1, &n, nullptr), m.field, "H5Screate_simple"));
    file_space = fsp.get();
    mem_space = msp.get();
  }
  auto read = [&](hid_t mem_type, void* buf) {
    if (n)
      r.check(H5Dread(m.ds.get(), mem_type, mem_space, file_space, H5P_DEFAULT, buf), m.field,
              "cannot read data");
  };
  if (m.cls == H5T_FLOAT) {
    auto& v = data.emplace<std::vector<double>>(count);
    read(H5T_NATIVE_DOUBLE, v.data());
  } else if (m.cls == H5T_INTEGER) {
    auto& v = data.emplace<std::vector<std::int64_t>>(count);
    read(H5T_NATIVE_INT64, v.data());
  } else {
    auto& v = data.emplace<std::vector<std::string>>();
    v.reserve(count);
    if (m.vlen) {
      Handle ft = h5::type(r.check(H5Dget_type(m.ds.get()), m.field, "cannot read datatype"));
      Handle mt = h5::type(r.check(H5Tcopy(H5T_C_S1), m.field, "H5Tcopy"));
      r.check(H5Tset_size(mt.get(), H5T_VARIABLE), m.field, "H5Tset_size");
      r.check(H5Tset_cset(mt.get(), H5Tget_cset(ft.get())), m.field, "H5Tset_cset");
      std::vector<char*> ptrs(count, nullptr);
      read(mt.get(), ptrs.data());
      for (char* p : ptrs) v.emplace_back(p ? p : "");
      if (n) {
        Handle rsp = msp.valid() ? std::move(msp)
                                 : h5::space(r.check(H5Dget_space(m.ds.get()), m.field, "cannot read dataspace"));
#if H5_VERSION_GE(1, 12, 0)
        H5Treclaim(mt.get(), rsp.get(), H5P_DEFAULT, ptrs.data());
#else
        H5Dvlen_reclaim(mt.get(), rsp.get(), H5P_DEFAULT, ptrs.data());
#endif
      }
    } else {
      Handle ft = h5::type(r.check(H5Dget_type(m.ds.get()), m.field, "cannot read datatype"));
      std::vector<char> cells(count * m.size);
      read(ft.get(), cells.data());
      for (std::size_t k = 0; k < count; ++k) {
        const char* p = cells.data() + k * m.size;
        v.emplace_back(p, strnlen(p, m.size));
      }
    }
  }
}

// Reads one column, checking it against the expected row count (or setting it).
void read_column(const Reader& r, Table& t, hid_t g, const std::string& name,
                 const std::string& field, std::optional<hsize_t>& rows) {
  const ColumnMeta m = inspect_column(r, g, name, field, rows);
  add_column(t, m);
  read_rows(r, m, 0, m.len, const_cast<Column&>(t.columns().back()).data);
}

}  // namespace

Attributes read_hdf5_attributes(const fs::path& path) {
  const Reader r(path);
  Attributes out;
  H5O_info_t info{};
#if H5_VERSION_GE(1, 12, 0)
  r.check(H5Oget_info3(r.file(), &info, H5O_INFO_NUM_ATTRS), "/", "cannot inspect the root group");
#else
  r.check(H5Oget_info2(r.file(), &info, H5O_INFO_NUM_ATTRS), "/", "cannot inspect the root group");
#endif
  for (hsize_t i = 0; i < info.num_attrs; ++i) {
    const ssize_t len =
        H5Aget_name_by_idx(r.file(), ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (len < 0) r.bad("/", "cannot list attributes: " + h5::take_error_text());
    std::string name(static_cast<std::size_t>(len) + 1, '\0');
    r.check(H5Aget_name_by_idx(r.file(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(),
                               name.size(), H5P_DEFAULT),
            "/", "cannot list attributes");
    name.resize(static_cast<std::size_t>(len));
    out[name] = r.string_attribute(r.file(), name, "attribute " + name);
  }
  return out;
}

Table read_hdf5_group(const fs::path& path, const std::string& group) {
  const Reader r(path);
  const std::string gfield = "/" + group;
  if (H5Lexists(r.file(), group.c_str(), H5P_DEFAULT) <= 0)
    r.bad(gfield, "no such group; is this a cisa-sim result file?");
  Handle g = h5::group(
      r.check(H5Gopen2(r.file(), group.c_str(), H5P_DEFAULT), gfield, "cannot open group"));
  H5G_info_t gi{};
  r.check(H5Gget_info(g.get(), &gi), gfield, "cannot read group");
  Table t;
  std::optional<hsize_t> rows;
  for (hsize_t i = 0; i < gi.nlinks; ++i) {
    const std::string name = link_name(r, g.get(), i, gfield);
    const std::string field = gfield + "/" + name;
    if (t.find(name)) r.bad(field, "column appears twice");
    read_column(r, t, g.get(), name, field, rows);
  }
  return t;
}

struct Hdf5GroupReader::Impl {
  explicit Impl(const fs::path& path) : r(path, true) {}
  Reader r;
  Handle g;
  Table schema;
  std::vector<ColumnMeta> cols;
  std::size_t rows = 0;
};

Hdf5GroupReader::Hdf5GroupReader(const fs::path& path, const std::string& group)
    : impl_(std::make_unique<Impl>(path)) {
  Impl& m = *impl_;
  const std::string gfield = "/" + group;
  if (H5Lexists(m.r.file(), group.c_str(), H5P_DEFAULT) <= 0)
    m.r.bad(gfield, "no such group; is this a cisa-sim result file?");
  m.g = h5::group(m.r.check(H5Gopen2(m.r.file(), group.c_str(), H5P_DEFAULT), gfield, "cannot open group"));
  H5G_info_t gi{};
  m.r.check(H5Gget_info(m.g.get(), &gi), gfield, "cannot read group");
  std::optional<hsize_t> rows;
  for (hsize_t i = 0; i < gi.nlinks; ++i) {
    const std::string name = link_name(m.r, m.g.get(), i, gfield);
    const std::string field = gfield + "/" + name;
    if (m.schema.find(name)) m.r.bad(field, "column appears twice");
    m.cols.push_back(inspect_column(m.r, m.g.get(), name, field, rows));
    add_column(m.schema, m.cols.back());
    m.cols.back().ds = Handle();  // reopened by read(): one column's chunk cache at a time
  }
  m.rows = rows ? static_cast<std::size_t>(*rows) : 0;
}

Hdf5GroupReader::~Hdf5GroupReader() = default;

std::size_t Hdf5GroupReader::rows() const { return impl_->rows; }
const Table& Hdf5GroupReader::schema() const { return impl_->schema; }
bool Hdf5GroupReader::fill_only(std::size_t k) const { return impl_->cols.at(k).as_fill; }

void Hdf5GroupReader::read(std::size_t k, std::size_t begin, std::size_t n, Column& out) {
  Impl& m = *impl_;
  ColumnMeta& c = m.cols.at(k);
  if (begin > m.rows || n > m.rows - begin) throw std::out_of_range("Hdf5GroupReader::read past the last row");
  if (!c.ds.valid()) {
    // A chunk cache of 256 KiB (HDF5's default: 1 MiB a dataset): rows are read in order, so a
    // chunk is needed by at most the read that ends in it and the next one.
    Handle dapl = h5::plist(m.r.check(H5Pcreate(H5P_DATASET_ACCESS), c.field, "H5Pcreate"));
    m.r.check(H5Pset_chunk_cache(dapl.get(), H5D_CHUNK_CACHE_NSLOTS_DEFAULT, 256 * 1024, H5D_CHUNK_CACHE_W0_DEFAULT),
              c.field, "H5Pset_chunk_cache");
    c.ds = h5::dataset(m.r.check(H5Dopen2(m.g.get(), c.name.c_str(), dapl.get()), c.field, "cannot open dataset"));
  }
  read_rows(m.r, c, static_cast<hsize_t>(begin), static_cast<hsize_t>(n), out.data);
}

void Hdf5GroupReader::release(std::size_t k) { impl_->cols.at(k).ds = Handle(); }

}  // namespace cisa
