#include "cisa/write_hdf5.hpp"

#ifdef CISA_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <bit>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "cisa/cell_deflate.hpp"
#include "cisa/hdf5_handle.hpp"
#include "cisa/output_file.hpp"
#include "cisa/same_text.hpp"

namespace cisa {

namespace {

namespace fs = std::filesystem;
using h5::Handle;

// Every HDF5 call of a write goes through one of these: a failure throws OutputError with the
// OS error when the file driver saw one (ENOSPC, EFBIG, EIO), else HDF5's own message.
class Checked {
 public:
  explicit Checked(const fs::path& target) : target_(target) {}
  hid_t id(hid_t v, const char* what) const {
    if (v < 0) fail(what);
    return v;
  }
  void ok(herr_t s, const char* what) const {
    if (s < 0) fail(what);
  }
  void close(Handle& h, const char* what) const { ok(h.close(), what); }
  [[noreturn]] void fail(const char* what) const {
    h5::write_failed(target_.string(), std::string("HDF5 ") + what + " failed");
  }

 private:
  fs::path target_;
};

// Whether every cell of rows [begin, begin + n) of `c` holds one value (float64 by its bits, so
// NaN counts); that value in `bits` (numbers) or `text`.
bool uniform_cells(const Column& c, std::size_t begin, std::size_t n, std::uint64_t& bits, std::string& text) {
  bits = 0;
  text.clear();
  if (n == 0) return false;
  // Numbers by their bits, 64 at a time without a branch each (vectorised): every chunk of every
  // column that is still uniform is read whole (~60 columns of a sweep).
  auto same_words = [&](const auto* v) {
    std::memcpy(&bits, v, sizeof bits);
    for (std::size_t k = 0; k < n; k += 64) {
      const std::size_t m = std::min<std::size_t>(64, n - k);
      std::uint64_t differ = 0;
      for (std::size_t j = 0; j < m; ++j) {
        std::uint64_t x;
        std::memcpy(&x, v + k + j, sizeof x);
        differ |= x ^ bits;
      }
      if (differ) return false;
    }
    return true;
  };
  if (const auto* f = std::get_if<std::vector<double>>(&c.data))
    return same_words(f->data() + begin);
  if (const auto* i = std::get_if<std::vector<std::int64_t>>(&c.data))
    return same_words(i->data() + begin);
  const auto& s = std::get<std::vector<std::string>>(c.data);
  text = s[begin];
  return std::all_of(s.begin() + static_cast<std::ptrdiff_t>(begin),
                     s.begin() + static_cast<std::ptrdiff_t>(begin + n),
                     [&](const std::string& v) { return same_text(v, text); });
}

// One column layout for streamed and held tables (Writer::create_slab / write_slab): a column
// whose first chunk of rows compresses well (values that repeat: the sweep's inputs and the values
// that depend on few of them) is stored in chunks of that many rows with HDF5's deflate filter,
// which every HDF5 reader (h5py, cisa-sim merge / --measurements / report) undoes; a column of one
// value is the dataset's fill value; the others stay contiguous. The chunks are encoded by
// libdeflate, not through HDF5's filter (zlib's deflate at level 1 costs ~1.3 ns a byte, more CPU
// than the disk time it saves on 2 cores), and written whole (H5Dwrite_chunk).
// Streamed tables: chunks of the first appended chunk's rows. Held tables (write_hdf5: a run's
// table, merge, plan, route, ...) of at least kHeldPackRows rows: chunks of kHeldChunkRows (the
// streamed runs' default); shorter ones stay contiguous, as before (small files gain nothing).
// CISA_H5_DEFLATE=0: no column is deflated, and held tables are laid out as before (contiguous).
constexpr double kDeflateBelow = 0.25;  // the encoder's bytes / raw bytes of the sample
constexpr std::size_t kSampleRows = 4096;
constexpr std::size_t kHeldPackRows = 4096;
constexpr std::size_t kHeldChunkRows = 16384;

// zlib-format chunks (RFC 1950) from libdeflate at level 1: on these columns several times
// zlib's speed, so the encoding costs less CPU than the disk time it saves.
class ChunkDeflater {
 public:
  ChunkDeflater() = default;
  ~ChunkDeflater() {
#ifdef CISA_HAVE_LIBDEFLATE
    if (c_) libdeflate_free_compressor(c_);
#endif
  }
  ChunkDeflater(const ChunkDeflater&) = delete;
  ChunkDeflater& operator=(const ChunkDeflater&) = delete;
  // Encodes in[0, n), cells of `cell` bytes (0: bytes), into out's first bytes (out grows, never
  // shrinks: no zero-fill per call); returns their count, or 0 when the stream would not be
  // smaller than n (or no libdeflate). Cells: detail::cell_deflate first (most chunks of a sweep's
  // columns repeat whole cells; it packs them at a fifth of libdeflate's CPU, ~15 % larger),
  // libdeflate for the others: those it does not pack to the share that made the column
  // deflated (kDeflateBelow; 3 of 64 deflated columns of the 1M bench sweep).
  // `bytewise` false: cell_deflate only (a column laid out before its values were seen,
  // Writer::Slab::late: a chunk it does not pack is stored as it is).
  std::size_t encode(const unsigned char* in, std::size_t n, std::vector<unsigned char>& out,
                     std::size_t cell = 0, bool bytewise = true) {
#ifdef CISA_HAVE_LIBDEFLATE
    if (n < 2) return 0;
    if (cell > 0)
      if (const std::size_t len = detail::cell_deflate(
              in, n, cell, out, static_cast<std::size_t>(kDeflateBelow * static_cast<double>(n))))
        return len;
    if (!bytewise) return 0;
    if (!c_ && !(c_ = libdeflate_alloc_compressor(1))) throw std::bad_alloc();
    if (out.size() < n) out.resize(n);
    return libdeflate_zlib_compress(c_, in, n, out.data(), n - 1);
#else
    (void)in, (void)n, (void)out, (void)cell, (void)bytewise;
    return 0;
#endif
  }

 private:
#ifdef CISA_HAVE_LIBDEFLATE
  libdeflate_compressor* c_ = nullptr;
#endif
};

bool deflate_wanted() {
#ifndef CISA_HAVE_LIBDEFLATE
  return false;  // built without libdeflate: every column as before
#else
  if (std::endian::native != std::endian::little) return false;  // H5Dwrite_chunk of native bytes
  if (const char* e = std::getenv("CISA_H5_DEFLATE"); e && std::string(e) == "0") return false;
  static const bool available = [] {
    unsigned cfg = 0;
    return H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0 && H5Zget_filter_info(H5Z_FILTER_DEFLATE, &cfg) >= 0 &&
           (cfg & H5Z_FILTER_CONFIG_DECODE_ENABLED);
  }();
  return available;
#endif
}

// A column's cells as the file stores them: 8-byte numbers, or `width`-byte null-padded strings
// (rows [begin, begin + n) into out, padded with zeros to `rows` rows). Every text write and every
// deflated chunk goes through it.
void stored_bytes(const Column& c, std::size_t width, std::size_t begin, std::size_t n, std::size_t rows,
                  std::vector<unsigned char>& out) {
  if (const auto* f = std::get_if<std::vector<double>>(&c.data)) {
    out.assign(rows * 8, 0);
    std::memcpy(out.data(), f->data() + begin, n * 8);
  } else if (const auto* i = std::get_if<std::vector<std::int64_t>>(&c.data)) {
    out.assign(rows * 8, 0);
    std::memcpy(out.data(), i->data() + begin, n * 8);
  } else {
    const auto& v = std::get<std::vector<std::string>>(c.data);
    const std::size_t size = std::max<std::size_t>(1, width);
    out.assign(rows * size, 0);
    for (std::size_t k = 0; k < n; ++k) {
      const std::string& t = v[begin + k];
      if (t.size() > size)
        throw std::logic_error("column " + c.name + ": '" + t + "' is longer than its width " + std::to_string(size));
      std::memcpy(out.data() + k * size, t.data(), t.size());
    }
  }
}

// A deflated column's whole chunk, encoded before its write (Hdf5TableStream encodes the
// columns of a chunk of rows on several threads; the writes stay serial, in column order, so the
// file's bytes are the same as when each chunk is encoded as it is written).
struct EncodedChunk {
  bool ready = false;                    // set: write_slab writes these bytes, encodes nothing
  bool same = false;                     // set: the chunk keeps the column at its fill value
  const unsigned char* cells = nullptr;  // the chunk as stored (the column's own numbers, or raw)
  std::size_t bytes = 0, len = 0;        // len > 0: z holds the encoded stream of that length
  std::vector<unsigned char> raw, z, shuffled;
};

class Writer {
 public:
  Writer(const fs::path& temp, const fs::path& target) : c_(target), deflate_(deflate_wanted()) {
    Handle fcpl = h5::plist(c_.id(H5Pcreate(H5P_FILE_CREATE), "H5Pcreate"));
    // Creation order, so readers list columns in table order.
    c_.ok(H5Pset_link_creation_order(fcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
          "link order");
    Handle fapl = h5::plist(c_.id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"));
    // The 1.10 format checksums the superblock, object headers and B-trees; readers of 1.10
    // and later read it. STRONG: closing the file also closes anything an error path left open.
    c_.ok(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_V110), "libver bounds");
    c_.ok(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "fclose degree");
    // No data sieve buffer: HDF5 would read back (pread) the file around each slab smaller than
    // the buffer to merge it there, for every column of every streamed chunk. Every slab is
    // written whole, once, so it can go to the file directly.
    c_.ok(H5Pset_sieve_buf_size(fapl.get(), 0), "sieve buffer");
    // Datasets of 64 KiB and more start on a page: a streamed chunk's rows then fill whole pages,
    // and a page the kernel already wrote back is not written again in part.
    c_.ok(H5Pset_alignment(fapl.get(), 65536, 4096), "alignment");
    file_ =
        h5::file(c_.id(H5Fcreate(temp.c_str(), H5F_ACC_EXCL, fcpl.get(), fapl.get()), "H5Fcreate"));
    scalar_ = h5::space(c_.id(H5Screate(H5S_SCALAR), "H5Screate"));
    dcpl_ = h5::plist(c_.id(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"));
    // Every element is written right after creation: skip the fill-value pass.
    c_.ok(H5Pset_fill_time(dcpl_.get(), H5D_FILL_TIME_NEVER), "fill time");
  }

  // Fixed-length, null-padded UTF-8: stored in the (checksummed) object header, not in the
  // global heap that variable-length strings use, which HDF5 does not checksum.
  void attribute(hid_t obj, const std::string& name, const std::string& value) {
    Handle t = h5::type(c_.id(H5Tcopy(H5T_C_S1), "H5Tcopy"));
    c_.ok(H5Tset_size(t.get(), std::max<std::size_t>(1, value.size())), "H5Tset_size");
    c_.ok(H5Tset_cset(t.get(), H5T_CSET_UTF8), "H5Tset_cset");
    c_.ok(H5Tset_strpad(t.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
    Handle a = h5::attribute(c_.id(
        H5Acreate2(obj, name.c_str(), t.get(), scalar_.get(), H5P_DEFAULT, H5P_DEFAULT), "H5Acreate2"));
    const std::string padded = value.empty() ? std::string(1, '\0') : value;
    c_.ok(H5Awrite(a.get(), t.get(), padded.data()), "H5Awrite");
    c_.close(a, "H5Aclose");
    c_.close(t, "H5Tclose");
  }

  void root_attributes(const Attributes& attributes) {
    for (const auto& [k, v] : attributes) attribute(file_.get(), k, v);
  }

  // A held table: every column through the streamed path's slabs, laid out as one appended
  // chunk of all its rows would be (uniform, deflated in chunks of kHeldChunkRows, or contiguous).
  void group(const Hdf5Group& grp) {
    Handle g = open_group(grp.name);
    const std::size_t n = grp.table->rows();
    const bool pack = deflate_ && n >= kHeldPackRows;
    for (const auto& col : grp.table->columns()) {
      std::size_t width = 0;
      if (const auto* t = std::get_if<std::vector<std::string>>(&col.data)) {
        width = 1;
        for (const auto& v : *t) width = std::max(width, v.size());
      }
      const hsize_t chunk = pack ? static_cast<hsize_t>(std::min(n, kHeldChunkRows)) : 0;
      Slab s = create_slab(g.get(), col, static_cast<hsize_t>(n), width, pack ? &col : nullptr, chunk);
      const std::size_t step = s.chunk ? static_cast<std::size_t>(s.chunk) : std::max<std::size_t>(1, n);
      for (std::size_t at = 0; at < n && !s.uniform; at += step)
        write_slab(s, col, at, std::min(step, n - at), static_cast<hsize_t>(at));
      close_slab(s);
    }
    close_group(g);
  }

  // Closes every object, flushes and closes the file; a failure (the final flush) is reported.
  void finish() {
    c_.close(dcpl_, "H5Pclose");
    c_.close(scalar_, "H5Sclose");
    c_.ok(H5Fflush(file_.get(), H5F_SCOPE_GLOBAL), "H5Fflush");
    c_.close(file_, "H5Fclose");
  }

  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // ---- streamed groups: datasets created ahead, rows written in slabs ----
  struct Slab {
    Handle ds, space, type;  // type: the fixed-length string type of a text column
    std::size_t width = 0;
    // A column whose rows so far all hold one value is stored as the dataset's fill value and not
    // written (HDF5 allocates no storage for it and reads return the fill value); the first
    // chunk with another value allocates the dataset, filled with that value, and is written.
    bool uniform = false;
    std::uint64_t fill_bits = 0;  // float64 / int64 fill value
    std::string fill_text;        // text fill value
    // Deflated (chunked) columns: rows a chunk, the dataset's rows. Slabs of whole chunks (the
    // last may be short) are encoded here and written as they are stored (H5Dwrite_chunk); others
    // go through HDF5's own filters.
    hsize_t chunk = 0, rows = 0;
    // Numbers deflated after HDF5's shuffle filter (their bytes by position: a column that differs
    // in its low bytes only, e.g. point_index), encoded by cell_deflate on bytes.
    bool shuffled = false;
    // Uniform in the first streamed chunk, so laid out before its values were seen: chunked and
    // deflated with the fill value (chunks never written read as it), chunks packed by whole
    // cells or stored as they are. (Contiguous, its first other value wrote the fill value
    // over the whole dataset, then every row: e.g. the outermost sweep axis, 16 MB a 1M run.)
    bool late = false;
  };
  Handle open_group(const std::string& name) {
    Handle gcpl = h5::plist(c_.id(H5Pcreate(H5P_GROUP_CREATE), "H5Pcreate"));
    c_.ok(H5Pset_link_creation_order(gcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
          "link order");
    Handle g = h5::group(
        c_.id(H5Gcreate2(file_.get(), name.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT), "H5Gcreate2"));
    c_.close(gcpl, "H5Pclose");
    return g;
  }
  // How a column is stored, from its first rows (as stored): kPlain when libdeflate packs them to
  // under kDeflateBelow (deflated; chunks by cell_deflate, else libdeflate), kShuffled when
  // they are numbers that cell_deflate does not pack by whole cells but does as bytes after the
  // shuffle filter (shuffled, deflated: an index, sums of few terms), kRaw otherwise
  // (contiguous). cell_deflate packing them settles kPlain without libdeflate.
  enum Packing { kRaw, kPlain, kShuffled };
  Packing packing_of(const Column& c, std::size_t width) {
    const std::size_t n = std::min(c.size(), kSampleRows);
    if (n < 64) return kRaw;  // too few rows to be worth a chunked layout
    stored_bytes(c, width, 0, n, n, raw_);
    const std::size_t bytes = raw_.size();
    const auto below = static_cast<std::size_t>(kDeflateBelow * static_cast<double>(bytes));
    const std::size_t cell = c.is_text() ? std::max<std::size_t>(1, width) : 8;
    if (detail::cell_deflate(raw_.data(), bytes, cell, zbuf_, below) > 0) return kPlain;
    const std::size_t len = enc_.encode(raw_.data(), bytes, zbuf_);
    if (len == 0 || len >= below) return kRaw;
    if (c.is_text()) return kPlain;
    shuffled_.resize(bytes);
    detail::shuffle8(raw_.data(), n, shuffled_.data());
    return detail::cell_deflate(shuffled_.data(), bytes, 1, zbuf_, below) > 0 ? kShuffled : kPlain;
  }
  // `first`: the first chunk of rows (all of them); when all its cells are equal the dataset takes
  // that value as its fill value (see Slab::uniform). nullptr: contiguous, written in full.
  // `chunk_rows` > 0: a column that is not uniform and packs (packing_of) is chunked and deflated.
  // `uniform` (Hdf5ColumnStream): whether the whole column holds first's first value, known by
  // the caller (first then need not hold every row).
  Slab create_slab(hid_t g, const Column& col, hsize_t n, std::size_t width, const Column* first = nullptr,
                   hsize_t chunk_rows = 0, const bool* uniform = nullptr) {
    Slab s;
    if (uniform)
      s.uniform = *uniform && first && n > 0 && uniform_cells(*first, 0, 1, s.fill_bits, s.fill_text);
    else
      s.uniform = first && n > 0 && uniform_cells(*first, 0, first->size(), s.fill_bits, s.fill_text);
    const Packing packing = !s.uniform && first && chunk_rows > 0 && n >= chunk_rows && deflate_
                                ? packing_of(*first, width)
                                : kRaw;
    // Uniform in the first of several streamed chunks (Hdf5TableStream): chunked (Slab::late).
    s.late = s.uniform && !uniform && first && first->size() < n && chunk_rows > 0 && deflate_;
    const bool deflate = packing != kRaw || s.late;
    if (deflate) s.chunk = chunk_rows, s.rows = n;
    s.shuffled = packing == kShuffled;
    if (s.uniform && s.fill_text.size() > std::max<std::size_t>(1, width))
      throw std::logic_error("column " + col.name + ": '" + s.fill_text + "' is longer than its width " + std::to_string(width));
    s.space = h5::space(c_.id(H5Screate_simple(1, &n, nullptr), "H5Screate_simple"));
    hid_t file_type = H5T_IEEE_F64LE;
    if (std::holds_alternative<std::vector<std::int64_t>>(col.data)) file_type = H5T_STD_I64LE;
    if (col.is_text()) {
      s.width = std::max<std::size_t>(1, width);
      s.type = h5::type(c_.id(H5Tcopy(H5T_C_S1), "H5Tcopy"));
      c_.ok(H5Tset_size(s.type.get(), s.width), "H5Tset_size");
      c_.ok(H5Tset_cset(s.type.get(), H5T_CSET_UTF8), "H5Tset_cset");
      c_.ok(H5Tset_strpad(s.type.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
      file_type = s.type.get();
    }
    Handle dcpl;
    if (deflate) {
      dcpl = h5::plist(c_.id(H5Pcopy(dcpl_.get()), "H5Pcopy"));
      c_.ok(H5Pset_chunk(dcpl.get(), 1, &chunk_rows), "H5Pset_chunk");
      if (s.shuffled) c_.ok(H5Pset_shuffle(dcpl.get()), "H5Pset_shuffle");  // before deflate
      c_.ok(H5Pset_deflate(dcpl.get(), 1), "H5Pset_deflate");
    }
    if (s.uniform) {
      if (!deflate) dcpl = h5::plist(c_.id(H5Pcopy(dcpl_.get()), "H5Pcopy"));
      c_.ok(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_IFSET), "fill time");
      // Chunked: storage a chunk at a time (HDF5's default, incremental).
      if (!deflate) c_.ok(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_LATE), "alloc time");
      if (col.is_text()) {
        std::vector<char> v(s.width, '\0');
        std::memcpy(v.data(), s.fill_text.data(), std::min(s.width, s.fill_text.size()));
        c_.ok(H5Pset_fill_value(dcpl.get(), s.type.get(), v.data()), "fill value");
      } else {
        c_.ok(H5Pset_fill_value(dcpl.get(), file_type == H5T_STD_I64LE ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE,
                                &s.fill_bits),
              "fill value");
      }
    }
    // A chunked column's slabs are whole chunks, written once: no chunk cache (each is filtered and
    // written by its H5Dwrite, not held until the dataset is closed).
    Handle dapl;
    if (deflate) {
      dapl = h5::plist(c_.id(H5Pcreate(H5P_DATASET_ACCESS), "H5Pcreate"));
      c_.ok(H5Pset_chunk_cache(dapl.get(), H5D_CHUNK_CACHE_NSLOTS_DEFAULT, 0, H5D_CHUNK_CACHE_W0_DEFAULT), "H5Pset_chunk_cache");
    }
    s.ds = h5::dataset(c_.id(H5Dcreate2(g, col.name.c_str(), file_type, s.space.get(), H5P_DEFAULT,
                                        s.uniform || deflate ? dcpl.get() : dcpl_.get(),
                                        deflate ? dapl.get() : H5P_DEFAULT),
                             "H5Dcreate2"));
    if (s.uniform || deflate) c_.close(dcpl, "H5Pclose");
    if (deflate) c_.close(dapl, "H5Pclose");
    attribute(s.ds.get(), "unit", col.unit);
    attribute(s.ds.get(), "description", col.description);
    return s;
  }
  // Whether rows [begin, begin + count) keep `s` at its fill value (nothing to write).
  static bool still_uniform(const Slab& s, const Column& col, std::size_t begin, hsize_t count) {
    if (!s.uniform) return false;
    std::uint64_t bits = 0;
    std::string text;
    return uniform_cells(col, begin, count, bits, text) && bits == s.fill_bits &&
           text == s.fill_text;
  }
  // Whether a slab at `offset` of `count` rows is one whole chunk of a deflated column (or the
  // short last one): written with H5Dwrite_chunk after encoding it here.
  static bool whole_chunk(const Slab& s, hsize_t count, hsize_t offset) {
    return s.chunk && offset % s.chunk == 0 && count <= s.chunk &&
           (count == s.chunk || offset + count == s.rows);
  }
  // Encodes such a chunk (the short last one padded with zeros, as HDF5 stores it) into `e`.
  // Touches nothing but its arguments: safe on several threads, one deflater and `e` each.
  static void encode_chunk(const Slab& s, const Column& col, std::size_t begin, hsize_t count,
                           ChunkDeflater& enc, EncodedChunk& e) {
    e.cells = nullptr;  // a whole chunk of numbers: as they are
    if (count == s.chunk && !col.is_text())
      e.cells = std::visit(
          [begin](const auto& v) {
            return reinterpret_cast<const unsigned char*>(v.data() + begin);
          },
          col.data);
    if (!e.cells) {
      stored_bytes(col, s.width, begin, count, s.chunk, e.raw);
      e.cells = e.raw.data();
    }
    e.bytes = s.chunk * (col.is_text() ? s.width : 8);
    if (s.shuffled) {
      e.shuffled.resize(e.bytes);
      detail::shuffle8(e.cells, static_cast<std::size_t>(s.chunk), e.shuffled.data());
      e.len = enc.encode(e.shuffled.data(), e.bytes, e.z, 1);
    } else {
      e.len = enc.encode(e.cells, e.bytes, e.z, col.is_text() ? s.width : 8, !s.late);
    }
    e.ready = true;
  }
  // Rows [begin, begin + count) of `col` at row `offset` of the dataset. `pre`: that slab's chunk,
  // already encoded (encode_chunk), else encoded here when it is a whole chunk.
  void write_slab(Slab& s, const Column& col, std::size_t begin, hsize_t count, hsize_t offset,
                  EncodedChunk* pre = nullptr) {
    if (count == 0) return;
    if (s.uniform) {
      if (pre && pre->same) {  // encode_chunks found it so
        pre->same = false;
        return;
      }
      if (still_uniform(s, col, begin, count)) return;  // the fill value
      s.uniform = false;
    }
    if (whole_chunk(s, count, offset)) {
      if (!pre || !pre->ready) {
        pre = &own_;
        encode_chunk(s, col, begin, count, enc_, own_);
      }
      const bool packed = pre->len > 0;
      // Filter mask: bit k set, the k-th filter was not applied to this chunk (it did not shrink:
      // stored as it is, not shuffled either).
      const unsigned skipped = s.shuffled ? 3U : 1U;
      c_.ok(H5Dwrite_chunk(s.ds.get(), H5P_DEFAULT, packed ? 0U : skipped, &offset,
                           packed ? pre->len : pre->bytes, packed ? pre->z.data() : pre->cells),
            "H5Dwrite_chunk");
      pre->ready = false;
      return;
    }
    c_.ok(H5Sselect_hyperslab(s.space.get(), H5S_SELECT_SET, &offset, nullptr, &count, nullptr), "H5Sselect_hyperslab");
    Handle mem = h5::space(c_.id(H5Screate_simple(1, &count, nullptr), "H5Screate_simple"));
    if (const auto* f = std::get_if<std::vector<double>>(&col.data)) {
      c_.ok(H5Dwrite(s.ds.get(), H5T_NATIVE_DOUBLE, mem.get(), s.space.get(), H5P_DEFAULT, f->data() + begin), "H5Dwrite");
    } else if (const auto* i = std::get_if<std::vector<std::int64_t>>(&col.data)) {
      c_.ok(H5Dwrite(s.ds.get(), H5T_NATIVE_INT64, mem.get(), s.space.get(), H5P_DEFAULT, i->data() + begin), "H5Dwrite");
    } else {
      stored_bytes(col, s.width, begin, count, count, raw_);
      c_.ok(H5Dwrite(s.ds.get(), s.type.get(), mem.get(), s.space.get(), H5P_DEFAULT, raw_.data()), "H5Dwrite");
    }
    c_.close(mem, "H5Sclose");
  }
  void close_slab(Slab& s) {
    if (s.width) c_.close(s.type, "H5Tclose");
    c_.close(s.ds, "H5Dclose");
    c_.close(s.space, "H5Sclose");
  }
  void close_group(Handle& g) { c_.close(g, "H5Gclose"); }

 private:
  Checked c_;

 public:
  bool deflates() const { return deflate_; }

 private:
  bool deflate_ = false;  // columns that compress well are deflated (deflate_wanted)
  ChunkDeflater enc_;
  std::vector<unsigned char> raw_, zbuf_, shuffled_;
  EncodedChunk own_;  // a chunk write_slab encodes itself
  Handle file_, scalar_, dcpl_;
};

// fdatasync of the temp file on a thread of its own, again after each chunk that came while one
// ran: the data and the file system's journal (the extents of every chunk written back) become
// durable while the run goes on, and commit()'s fsync waits for the last chunks only (it took
// ~100 ms at the end of a 1M-point run: one journal commit for the whole file). Errors are left
// to that fsync, which reports them to the run.
class BackgroundSync {
 public:
  explicit BackgroundSync(int fd) : fd_(fd), thread_([this] { loop(); }) {}
  ~BackgroundSync() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  BackgroundSync(const BackgroundSync&) = delete;
  BackgroundSync& operator=(const BackgroundSync&) = delete;
  void poke() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending_ = true;
    }
    cv_.notify_all();
  }

 private:
  void loop() {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || pending_; });
        if (stop_) return;
        pending_ = false;
      }
      ::fdatasync(fd_);
    }
  }
  int fd_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool pending_ = false, stop_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace

struct Hdf5TableStream::Impl {
  Impl(const fs::path& path) : out(path.string()) {}
  ~Impl() {
    syncing.reset();
    if (sync_fd >= 0) ::close(sync_fd);
  }
  OutputFile out;  // first member: destroyed last, after every HDF5 object is closed
  // A second descriptor of the temp file: after each chunk the kernel is asked to start writing
  // it back (sync_file_range, asynchronous), so commit()'s fsync waits for the last chunks only.
  int sync_fd = -1;
  std::unique_ptr<BackgroundSync> syncing;  // on sync_fd; ended before it is closed
  std::unique_ptr<Writer> w;
  Handle group;
  // Datasets are created with the first chunk (or at commit when there are no rows): their fill
  // values come from it (Writer::Slab::uniform).
  Table schema;
  std::vector<std::size_t> widths;  // per column: the text width (0: a number column)
  std::vector<Writer::Slab> slabs;
  std::size_t rows = 0, written = 0;
  // Threads that encode a chunk's deflated columns (set_threads), a deflater each, and a buffer a
  // column: on 2 cores the encoding was most of the sink's time, and the sink, one thread, bounded
  // the whole run.
  unsigned threads = 1;
  std::vector<std::unique_ptr<ChunkDeflater>> deflaters;
  std::vector<EncodedChunk> encoded;
  void encode_chunks(const Table& chunk);
  void create_slabs(const Table* first) {
    const auto& cols = schema.columns();
    for (std::size_t k = 0; k < cols.size(); ++k)
      slabs.push_back(w->create_slab(group.get(), cols[k], static_cast<hsize_t>(rows), widths[k],
                                     first ? &first->columns()[k] : nullptr, first ? first->rows() : 0));
  }
};

Hdf5TableStream::Hdf5TableStream(const fs::path& path, const std::string& group, const Table& schema,
                                 std::size_t rows, const std::map<std::string, std::size_t>& text_widths,
                                 const Attributes& attributes) {
  h5::quiet();
  impl_ = std::make_unique<Impl>(path);
  Impl& m = *impl_;
  m.rows = rows;
  m.w = std::make_unique<Writer>(m.out.temp(), m.out.target());
  m.sync_fd = ::open(m.out.temp().c_str(), O_RDONLY | O_CLOEXEC);  // advisory: -1 is fine
  m.w->root_attributes(attributes);
  m.group = m.w->open_group(group);
  m.schema = schema;
  for (const auto& col : schema.columns()) {
    std::size_t width = 0;
    if (col.is_text()) {
      const auto it = text_widths.find(col.name);
      if (it == text_widths.end()) throw std::logic_error("no width for text column " + col.name);
      width = it->second;
    }
    m.widths.push_back(width);
  }
}

Hdf5TableStream::~Hdf5TableStream() = default;

void Hdf5TableStream::set_threads(unsigned threads) {
  impl_->threads = std::max(1u, threads);
}

// Encodes the chunk's whole chunks of deflated columns (those write_slab would encode) into
// `encoded`, a column at a time from a shared counter, on up to `threads` threads (this one too).
void Hdf5TableStream::Impl::encode_chunks(const Table& chunk) {
  const auto& cols = chunk.columns();
  encoded.resize(cols.size());  // none ready: write_slab encodes those it gets
  const auto n = static_cast<hsize_t>(chunk.rows()), at = static_cast<hsize_t>(written);
  std::vector<std::size_t> todo;
  for (std::size_t k = 0; k < cols.size(); ++k)
    if (Writer::whole_chunk(slabs[k], n, at)) todo.push_back(k);
  const unsigned workers = static_cast<unsigned>(std::min<std::size_t>(threads, todo.size()));
  if (workers < 2) return;  // write_slab encodes them as it goes
  while (deflaters.size() < workers) deflaters.push_back(std::make_unique<ChunkDeflater>());
  std::atomic<std::size_t> next{0};
  std::exception_ptr failed;
  std::mutex failed_mu;
  auto encode = [&](ChunkDeflater& enc) {
    try {
      for (std::size_t j; (j = next.fetch_add(1)) < todo.size();) {
        const std::size_t k = todo[j];
        if (Writer::still_uniform(slabs[k], cols[k], 0, n))
          encoded[k].same = true;  // write_slab writes nothing
        else
          Writer::encode_chunk(slabs[k], cols[k], 0, n, enc, encoded[k]);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failed_mu);
      if (!failed) failed = std::current_exception();
    }
  };
  std::vector<std::thread> helpers;
  try {
    for (unsigned t = 1; t < workers; ++t) helpers.emplace_back(encode, std::ref(*deflaters[t]));
  } catch (const std::system_error&) {
    // No more threads: the ones started and this one encode every column.
  }
  encode(*deflaters[0]);
  for (auto& t : helpers) t.join();
  if (failed) std::rethrow_exception(failed);
}

void Hdf5TableStream::append(const Table& chunk) {
  h5::quiet();  // per thread in a thread-safe HDF5: append runs on the sink thread
  Impl& m = *impl_;
  const std::size_t n = chunk.rows();
  const auto& cols = chunk.columns();
  const auto& want = m.schema.columns();
  if (cols.size() != want.size()) throw std::logic_error("Hdf5TableStream: columns differ from the schema");
  if (m.written + n > m.rows) throw std::logic_error("Hdf5TableStream: more rows than announced");
  for (std::size_t k = 0; k < cols.size(); ++k)
    if (cols[k].name != want[k].name || cols[k].data.index() != want[k].data.index())
      throw std::logic_error("Hdf5TableStream: column " + cols[k].name + " differs from the schema");
  if (n == 0) return;
  if (m.slabs.empty()) m.create_slabs(&chunk);
  m.encode_chunks(chunk);
  for (std::size_t k = 0; k < cols.size(); ++k) {
    m.w->write_slab(m.slabs[k], cols[k], 0, static_cast<hsize_t>(n),
                    static_cast<hsize_t>(m.written), &m.encoded[k]);
  }
  m.written += n;
#ifdef __linux__
  if (m.sync_fd >= 0) ::sync_file_range(m.sync_fd, 0, 0, SYNC_FILE_RANGE_WRITE);  // start write-back; errors: at fsync
#endif
  if (m.sync_fd >= 0 && !m.syncing) {
    try {
      m.syncing = std::make_unique<BackgroundSync>(m.sync_fd);
    } catch (const std::system_error&) {
      // No thread: commit()'s fsync does it all, as before.
    }
  }
  if (m.syncing) m.syncing->poke();
}

void Hdf5TableStream::commit() {
  h5::quiet();
  Impl& m = *impl_;
  if (m.written != m.rows)
    throw std::logic_error("Hdf5TableStream: " + std::to_string(m.written) + " rows written of " + std::to_string(m.rows));
  if (m.slabs.empty()) m.create_slabs(nullptr);  // no rows
  for (auto& s : m.slabs) m.w->close_slab(s);
  m.w->close_group(m.group);
  m.w->finish();
  m.w.reset();
  m.syncing.reset();  // waits for an fdatasync under way
  if (m.sync_fd >= 0) {
    ::close(m.sync_fd);
    m.sync_fd = -1;
  }
  m.out.commit();
}

struct Hdf5ColumnStream::Impl {
  explicit Impl(const fs::path& path) : out(path.string()) {}
  OutputFile out;  // first member: destroyed last, after every HDF5 object is closed
  std::unique_ptr<Writer> w;
  Handle group;
  std::size_t rows = 0, written = 0;
  bool pack = false, open = false;
  Writer::Slab slab;
};

Hdf5ColumnStream::Hdf5ColumnStream(const fs::path& path, const std::string& group, std::size_t rows,
                                   const Attributes& attributes) {
  h5::quiet();
  impl_ = std::make_unique<Impl>(path);
  Impl& m = *impl_;
  m.rows = rows;
  m.w = std::make_unique<Writer>(m.out.temp(), m.out.target());
  m.w->root_attributes(attributes);
  m.group = m.w->open_group(group);
  m.pack = m.w->deflates() && rows >= kHeldPackRows;  // as Writer::group
}

Hdf5ColumnStream::~Hdf5ColumnStream() = default;

bool Hdf5ColumnStream::packs() const { return impl_->pack; }
std::size_t Hdf5ColumnStream::block_rows() const { return kHeldChunkRows; }  // whole chunks: encoded here

void Hdf5ColumnStream::begin(const Column& head, bool uniform, std::size_t width) {
  Impl& m = *impl_;
  if (m.open) throw std::logic_error("Hdf5ColumnStream: begin() before end()");
  const bool u = uniform && m.pack;  // unpacked tables hold no fill values (Writer::group)
  const hsize_t chunk = m.pack ? static_cast<hsize_t>(std::min(m.rows, kHeldChunkRows)) : 0;
  m.slab = m.w->create_slab(m.group.get(), head, static_cast<hsize_t>(m.rows), head.is_text() ? width : 0,
                            m.pack ? &head : nullptr, chunk, &u);
  m.written = 0;
  m.open = true;
}

void Hdf5ColumnStream::append(const Column& block) {
  Impl& m = *impl_;
  const std::size_t n = block.size();
  if (!m.open || m.slab.uniform || m.written + n > m.rows)
    throw std::logic_error("Hdf5ColumnStream: append() outside a column, to a uniform one, or past its rows");
  if (n != kHeldChunkRows && m.written + n != m.rows)
    throw std::logic_error("Hdf5ColumnStream: blocks of block_rows() rows but the last");
  m.w->write_slab(m.slab, block, 0, static_cast<hsize_t>(n), static_cast<hsize_t>(m.written));
  m.written += n;
}

void Hdf5ColumnStream::end() {
  Impl& m = *impl_;
  if (!m.open || (!m.slab.uniform && m.written != m.rows))
    throw std::logic_error("Hdf5ColumnStream: " + std::to_string(m.written) + " rows written of " + std::to_string(m.rows));
  m.w->close_slab(m.slab);
  m.open = false;
}

void Hdf5ColumnStream::commit() {
  h5::quiet();
  Impl& m = *impl_;
  if (m.open) throw std::logic_error("Hdf5ColumnStream: commit() inside a column");
  m.w->close_group(m.group);
  m.w->finish();
  m.w.reset();
  m.out.commit();
}

void write_hdf5(const fs::path& path, const std::vector<Hdf5Group>& groups,
                const Attributes& attributes) {
  h5::quiet();
  for (const auto& grp : groups)
    grp.table->rows();  // throws on ragged columns before anything is written
  OutputFile out(path.string());
  {
    Writer w(out.temp(), out.target());
    w.root_attributes(attributes);
    for (const auto& grp : groups) w.group(grp);
    w.finish();
  }
  out.commit();
}

// The chunk encoder, for tests/unit/test_h5_deflate.cpp (which declares it: not in a header).
namespace detail {
bool deflate_chunk(const unsigned char* in, std::size_t n, std::vector<unsigned char>& out) {
  ChunkDeflater enc;
  const std::size_t len = enc.encode(in, n, out);
  out.resize(len);
  return len > 0;
}
}  // namespace detail

}  // namespace cisa
