#include "cisa/write_text.hpp"

#include "cisa/format_g10.hpp"
#include "cisa/output_file.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace cisa {

namespace {

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<int>(ch));
        else
          out += ch;
    }
  }
  return out;
}

std::string cell(const Column& c, std::size_t row, const ShownColumn& s) {
  if (const auto* f = std::get_if<std::vector<double>>(&c.data)) {
    const double v = (*f)[row] / s.scale;
    if (std::isnan(v)) return "-";
    if (v != 0 && (std::fabs(v) >= 1e7 || std::fabs(v) < 1e-3)) return fmt::format("{:.{}e}", v, s.precision - 1);
    return fmt::format("{:.{}f}", v, std::max(0, s.precision - 1 - static_cast<int>(std::floor(std::log10(std::max(std::fabs(v), 1.0))))));
  }
  if (s.scale != 1.0)
    if (const auto* i = std::get_if<std::vector<std::int64_t>>(&c.data))
      return fmt::format("{:g}", static_cast<double>((*i)[row]) / s.scale);
  return c.format_cell(row);
}

std::vector<std::vector<std::string>> render(const Table& t, const std::vector<ShownColumn>& cols,
                                             std::vector<std::string>& titles) {
  std::vector<std::vector<std::string>> cells;
  const std::size_t n = t.rows();
  for (const auto& s : cols) {
    const Column* c = t.find(s.name);
    if (!c) throw std::logic_error("no column " + s.name);
    const std::string unit = s.unit.empty() ? c->unit : s.unit;
    titles.push_back(unit.empty() ? s.title : s.title + " [" + unit + "]");
    std::vector<std::string> col;
    for (std::size_t r = 0; r < n; ++r) col.push_back(cell(*c, r, s));
    cells.push_back(std::move(col));
  }
  return cells;
}

// A CSV number cell (printf's "%.10g", "nan"), at p (at most 32 characters); returns its end.
char* csv_number(char* p, double v) {
  if (std::isnan(v)) {
    std::memcpy(p, "nan", 3);
    return p + 3;
  }
  if (v == std::floor(v) && std::fabs(v) < 1e10) {
    // What "%.10g" prints for an integer of at most 10 digits, without the float formatter.
    if (v == 0) {
      if (std::signbit(v)) *p++ = '-';
      *p++ = '0';
      return p;
    }
    return std::to_chars(p, p + 32, static_cast<long long>(v)).ptr;
  }
  return format_g10(p, v);
}

}  // namespace

void append_csv_cell(std::string& out, const Column& c, std::size_t row) {
  if (const auto* f = std::get_if<std::vector<double>>(&c.data)) {
    char buf[32];
    out.append(buf, csv_number(buf, (*f)[row]));
  } else if (const auto* i = std::get_if<std::vector<std::int64_t>>(&c.data)) {
    fmt::format_to(std::back_inserter(out), FMT_COMPILE("{}"), (*i)[row]);
  } else {
    out += csv_escape(std::get<std::vector<std::string>>(c.data)[row]);
  }
}

namespace {

// Formats rows [0, n) with `rows(out, begin, end, thread)` on up to `threads` threads, a block of
// rows each at a time (bounded buffers), and writes them in order.
template <class Buf, class RowsFn>
void write_rows(std::ostream& os, std::size_t n, unsigned threads, RowsFn rows) {
  constexpr std::size_t kBlock = 2048;  // rows per buffer (~2.5 MB of CSV)
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  const unsigned t = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(threads, blocks)));
  std::vector<Buf> bufs(t);
  auto fill = [&](unsigned k, std::size_t block) {
    bufs[k].clear();
    rows(bufs[k], block * kBlock, std::min(n, (block + 1) * kBlock), k);
  };
  for (std::size_t b0 = 0; b0 < blocks; b0 += t) {
    const unsigned m = static_cast<unsigned>(std::min<std::size_t>(t, blocks - b0));
    if (m == 1) {
      fill(0, b0);
    } else {
      std::vector<std::thread> pool;
      for (unsigned k = 1; k < m; ++k) pool.emplace_back(fill, k, b0 + k);
      fill(0, b0);
      for (auto& th : pool) th.join();
    }
    for (unsigned k = 0; k < m; ++k) os.write(bufs[k].data(), static_cast<std::streamsize>(bufs[k].size()));
  }
}

// An output buffer written through a raw pointer (no capacity check or zero-fill per character).
class CharBuf {
 public:
  char* reserve(std::size_t more) {  // room for `more` characters at the end
    if (size_ + more > cap_) {
      const std::size_t cap = std::max(2 * cap_, size_ + more + 4096);
      std::unique_ptr<char[]> p(new char[cap]);
      if (size_) std::memcpy(p.get(), p_.get(), size_);
      p_ = std::move(p);
      cap_ = cap;
    }
    return p_.get() + size_;
  }
  void commit(const char* end) { size_ = static_cast<std::size_t>(end - p_.get()); }
  void clear() { size_ = 0; }
  const char* data() const { return p_.get(); }
  std::size_t size() const { return size_; }

 private:
  std::unique_ptr<char[]> p_;
  std::size_t size_ = 0, cap_ = 0;
};


}  // namespace

void write_csv_header(std::ostream& os, const Table& t) {
  const auto& cols = t.columns();
  for (std::size_t i = 0; i < cols.size(); ++i) os << (i ? "," : "") << csv_escape(cols[i].name);
  os << '\n';
}

// ---- CSV rows ----
//
// Rows are formatted a block at a time (kBlock rows) on `threads` worker threads while the calling
// thread writes the finished blocks in order: the write(2) of one block (the kernel's copy into the
// page cache) overlaps the formatting of the next ones. Buffers and scratch live as long as the
// writer, so a streamed run allocates (and page-faults) them once, not once a chunk. Blocks are
// small (256 rows, ~300 KB of CSV): a worker's two buffers stay in its core's L2 while it writes
// them and the kernel copies them (blocks of 2,048 rows, 2.5 MB, cost 0.5 s more CPU a million
// rows, half of it in write(2)).
//
// Within a block, rows are formatted kRows at a time: first column by column into fixed
// 32-character slots (each column's cells read as one run, and a cell equal to the one above
// refers to that one's text instead of being formatted again: sweeps repeat most values from row
// to row; a changed cell is looked up among the column's 32 recent values by a hash of its bits,
// which the innermost axes' cycles hit: a third of the changed cells of a 1M-point sweep), then
// joined row by row with fixed 32-byte copies. Texts are copied only when a row is
// joined, long after they were written.
struct CsvRowWriter::Impl {
  static constexpr std::size_t kCell = 32, kRows = 32, kBlock = 256;
  struct Ref {
    const double* f = nullptr;
    const std::int64_t* i = nullptr;
    const std::vector<std::string>* s = nullptr;
  };
  static constexpr int kCacheBits = 5;
  struct Cached {
    std::uint64_t bits = 0;
    unsigned char len = 0;  // 0: empty
    char text[kCell];
  };
  struct Scratch {
    std::vector<std::uint64_t> bits;      // per column: the last formatted cell's value ...
    std::vector<char> last;               // ... and its text (kCell a column), for the next block:
    int bank = 0;                         // two banks, read by a block's rows while the other is written
    std::vector<unsigned char> last_len;  // 0: none yet
    std::vector<char> slot;               // per column, kRows cells of kCell
    // Per row and column (row-major, [j * nc + i]: the join reads a row's entries in one run;
    // column-major, its reads were 256 bytes apart and met in few L1 sets): the cell's text (a
    // slot or `last`) and its length (> kCell: a long text cell, copied by length).
    std::vector<const char*> text;
    std::vector<std::size_t> len;
    std::vector<std::size_t> extra;      // per row: the lengths of its long cells
    std::vector<std::string> long_text;  // per text column and row: an escaped or long text
    std::vector<Cached> cache;           // per number column, kCache recent values' texts (by hash)
    CharBuf out[2];                      // blocks k, k + 2 threads, ... and the ones between
  };
  unsigned threads = 1;
  std::size_t nc = 0;
  std::vector<Ref> refs;
  std::vector<Scratch> scratch;  // per worker

  void prepare(const Table& t) {
    const auto& cols = t.columns();
    if (cols.size() != nc || scratch.empty()) {
      nc = cols.size();
      scratch = std::vector<Scratch>(std::max(1u, threads));
      for (auto& sc : scratch) {
        sc.bits.assign(nc, 0);
        sc.last.assign(2 * nc * kCell, '\0');
        sc.last_len.assign(nc, 0);
        sc.slot.assign(nc * kRows * kCell, '\0');
        sc.text.assign(nc * kRows, nullptr);
        sc.len.assign(nc * kRows, 0);
        sc.extra.assign(kRows, 0);
        sc.long_text.assign(nc * kRows, std::string());
        sc.cache.assign(nc << kCacheBits, Cached());
      }
    }
    refs.assign(nc, Ref());
    for (std::size_t i = 0; i < nc; ++i) {
      if (const auto* f = std::get_if<std::vector<double>>(&cols[i].data))
        refs[i].f = f->data();
      else if (const auto* v = std::get_if<std::vector<std::int64_t>>(&cols[i].data))
        refs[i].i = v->data();
      else
        refs[i].s = &std::get<std::vector<std::string>>(cols[i].data);
    }
  }

  // Rows [begin, end) as CSV lines into out (appended).
  void format(Scratch& sc, CharBuf& out, std::size_t begin, std::size_t end) {
    for (std::size_t r0 = begin; r0 < end; r0 += kRows) {
      const std::size_t m = std::min(kRows, end - r0);
      sc.bank ^= 1;
      std::fill(sc.extra.begin(), sc.extra.begin() + static_cast<std::ptrdiff_t>(m), 0);
      for (std::size_t i = 0; i < nc; ++i) {
        const Ref& ref = refs[i];
        const char** text = sc.text.data() + i;
        std::size_t* len = sc.len.data() + i;
        if (ref.s) {
          text_column(sc, i, r0, m, text, len);
          continue;
        }
        // The column's next kRows cells, fetched while this column's and the others' are done:
        // a chunk's columns are read 32 rows (4 lines) at a time, too little for the hardware
        // prefetcher, and were written by another core (each read waited on the memory).
        if (r0 + m < end) {
          const char* next = ref.f ? reinterpret_cast<const char*>(ref.f + r0 + m)
                                   : reinterpret_cast<const char*>(ref.i + r0 + m);
          for (std::size_t b = 0; b < kRows * 8; b += 64) __builtin_prefetch(next + b);
        }
        const char* last = sc.last.data() + ((1 - sc.bank) * nc + i) * kCell;
        const char* prev = sc.last_len[i] ? last : nullptr;
        std::size_t prev_len = sc.last_len[i];
        std::uint64_t prev_bits = sc.bits[i];
        char* cell = sc.slot.data() + i * kRows * kCell;
        Cached* cache = sc.cache.data() + (i << kCacheBits);
        std::size_t missed[kRows], misses = 0;  // rows formatted here
        for (std::size_t j = 0; j < m; ++j, cell += kCell) {
          const std::size_t r = r0 + j;
          std::uint64_t bits = 0;
          if (ref.f) std::memcpy(&bits, ref.f + r, sizeof bits);
          else bits = static_cast<std::uint64_t>(ref.i[r]);
          if (!prev || prev_bits != bits) {
            // A value met lately in this column (sweeps cycle through a few values): its text.
            Cached& hit = cache[(bits * 0x9E3779B97F4A7C15ULL) >> (64 - kCacheBits)];
            if (hit.len && hit.bits == bits) {
              std::memcpy(cell, hit.text, kCell);
              prev_len = hit.len;
            } else {
              char* e = ref.f ? csv_number(cell, ref.f[r])
                              : std::to_chars(cell, cell + kCell, ref.i[r]).ptr;
              prev_len = static_cast<std::size_t>(e - cell);
              missed[misses++] = j;  // cached below, not read back while its stores are in flight
            }
            prev = cell;
            prev_bits = bits;
          }
          text[j * nc] = prev;
          len[j * nc] = prev_len;
        }
        for (std::size_t k = 0; k < misses; ++k) {
          const std::size_t j = missed[k];
          std::uint64_t bits = 0;
          if (ref.f)
            std::memcpy(&bits, ref.f + r0 + j, sizeof bits);
          else
            bits = static_cast<std::uint64_t>(ref.i[r0 + j]);
          Cached& c = cache[(bits * 0x9E3779B97F4A7C15ULL) >> (64 - kCacheBits)];
          c.bits = bits;
          c.len = static_cast<unsigned char>(len[j * nc]);
          std::memcpy(c.text, sc.slot.data() + (i * kRows + j) * kCell, kCell);
        }
        sc.bits[i] = prev_bits;
        std::memcpy(sc.last.data() + (sc.bank * nc + i) * kCell, prev, kCell);
        sc.last_len[i] = static_cast<unsigned char>(prev_len);
      }
      char* p = out.reserve(m * (nc * (kCell + 1) + 1));
      for (std::size_t j = 0; j < m; ++j) {
        if (sc.extra[j]) {  // long text cells: room for them too
          out.commit(p);
          p = out.reserve((m - j) * (nc * (kCell + 1) + 1) + sc.extra[j]);
        }
        for (std::size_t i = 0; i < nc; ++i) {
          *p = ',';
          p += i != 0;
          const std::size_t n = sc.len[j * nc + i];
          const char* t = sc.text[j * nc + i];
          // Most cells have at most 16 characters: one 16-byte copy (room: kCell + 1 a column).
          std::memcpy(p, t, 16);
          if (n > 16) {
            std::memcpy(p + 16, t + 16, kCell - 16);
            if (n > kCell) std::memcpy(p, t, n);
          }
          p += n;
        }
        *p++ = '\n';
      }
      out.commit(p);
    }
  }

  // A text column's cells of rows [r0, r0 + m): quoted where needed, in the slots when they fit.
  void text_column(Scratch& sc, std::size_t i, std::size_t r0, std::size_t m, const char** text,
                   std::size_t* len) {
    const auto& v = *refs[i].s;
    char* slots = sc.slot.data() + i * kRows * kCell;
    const std::string* prev = nullptr;  // the text above, within these rows
    std::size_t prev_j = 0;
    for (std::size_t j = 0; j < m; ++j) {
      const std::string& s = v[r0 + j];
      if (prev && s.size() == prev->size() && std::memcmp(s.data(), prev->data(), s.size()) == 0) {
        text[j * nc] = text[prev_j * nc];
        len[j * nc] = len[prev_j * nc];
        if (len[j * nc] > kCell) sc.extra[j] += len[j * nc];
        continue;
      }
      bool plain = true;
      for (char ch : s) plain &= ch != ',' && ch != '"' && ch != '\n';
      const std::string* t = &s;
      std::string& keep = sc.long_text[i * kRows + j];
      if (!plain) {
        keep = csv_escape(s);
        t = &keep;
      }
      if (t->size() <= kCell) {
        std::memcpy(slots + j * kCell, t->data(), t->size());
        text[j * nc] = slots + j * kCell;
      } else {
        if (t != &keep) keep = *t;
        text[j * nc] = keep.data();
        sc.extra[j] += t->size();
      }
      len[j * nc] = t->size();
      prev = &s;
      prev_j = j;
    }
  }

  void write(std::ostream& os, const Table& t) {
    prepare(t);
    const std::size_t n = t.rows();
    const std::size_t blocks = (n + kBlock - 1) / kBlock;
    const unsigned w =
        static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(threads, blocks)));
    auto put = [&](const CharBuf& b) {
      os.write(b.data(), static_cast<std::streamsize>(b.size()));
    };
    if (w == 1) {
      for (std::size_t b = 0; b < blocks; ++b) {
        CharBuf& out = scratch[0].out[0];
        out.clear();
        format(scratch[0], out, b * kBlock, std::min(n, (b + 1) * kBlock));
        put(out);
      }
      return;
    }
    // Worker k formats blocks k, k + w, k + 2w, ... into its buffers 0, 1, 0, ...; this thread
    // writes block b once it is ready, and frees its buffer for block b + 2w.
    std::mutex mu;
    std::condition_variable cv;
    std::vector<char> ready(blocks, 0);
    std::size_t written = 0;  // blocks written
    bool stop = false;
    std::exception_ptr failed;
    auto work = [&](unsigned k) {
      try {
        for (std::size_t b = k, round = 0; b < blocks; b += w, ++round) {
          {
            std::unique_lock<std::mutex> lock(mu);
            cv.wait(lock, [&] { return stop || b < 2 * w || written > b - 2 * w; });
            if (stop) return;
          }
          CharBuf& out = scratch[k].out[round % 2];
          out.clear();
          format(scratch[k], out, b * kBlock, std::min(n, (b + 1) * kBlock));
          {
            std::lock_guard<std::mutex> lock(mu);
            ready[b] = 1;
          }
          cv.notify_all();
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failed) failed = std::current_exception();
        stop = true;
        cv.notify_all();
      }
    };
    std::vector<std::thread> pool;
    pool.reserve(w);
    try {
      for (unsigned k = 0; k < w; ++k) pool.emplace_back(work, k);
      for (std::size_t b = 0; b < blocks; ++b) {
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return stop || ready[b]; });
          if (stop) break;
        }
        put(scratch[b % w].out[(b / w) % 2]);
        {
          std::lock_guard<std::mutex> lock(mu);
          written = b + 1;
        }
        cv.notify_all();
      }
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!failed) failed = std::current_exception();
        stop = true;
      }
      cv.notify_all();
    }
    for (auto& th : pool) th.join();
    if (failed) std::rethrow_exception(failed);
  }
};

CsvRowWriter::CsvRowWriter(unsigned threads) : impl_(std::make_unique<Impl>()) {
  impl_->threads = std::max(1u, threads);
}
CsvRowWriter::~CsvRowWriter() = default;
void CsvRowWriter::write(std::ostream& os, const Table& t) {
  impl_->write(os, t);
}

void write_csv_rows(std::ostream& os, const Table& t, unsigned threads) {
  CsvRowWriter(threads).write(os, t);
}

void write_csv(std::ostream& os, const Table& t) {
  write_csv_header(os, t);
  write_csv_rows(os, t);
}

void write_json_begin(std::ostream& os, const Table& t, const Attributes& attributes) {
  os << "{\n  \"attributes\": {";
  bool first = true;
  for (const auto& [k, v] : attributes) {
    os << (first ? "\n" : ",\n") << "    \"" << json_escape(k) << "\": \"" << json_escape(v) << "\"";
    first = false;
  }
  os << "\n  },\n  \"units\": {";
  const auto& cols = t.columns();
  for (std::size_t i = 0; i < cols.size(); ++i)
    os << (i ? ", " : "") << "\"" << cols[i].name << "\": \"" << json_escape(cols[i].unit) << "\"";
  os << "},\n  \"points\": [";
}

void write_json_rows(std::ostream& os, const Table& t, bool first_chunk, unsigned threads) {
  const auto& cols = t.columns();
  write_rows<std::string>(os, t.rows(), threads, [&](std::string& out, std::size_t begin, std::size_t end, unsigned) {
    for (std::size_t r = begin; r < end; ++r) {
      out += (r || !first_chunk) ? ",\n    {" : "\n    {";
      for (std::size_t i = 0; i < cols.size(); ++i) {
        out += i ? ", \"" : "\"";
        out += cols[i].name;
        out += "\": ";
        const Column& c = cols[i];
        if (c.is_text()) {
          out += '"';
          out += json_escape(c.format_cell(r));
          out += '"';
        } else if (const auto* f = std::get_if<std::vector<double>>(&c.data)) {
          if (std::isfinite((*f)[r]))
            fmt::format_to(std::back_inserter(out), FMT_COMPILE("{:.17g}"), (*f)[r]);
          else
            out += "null";
        } else {
          out += c.format_cell(r);
        }
      }
      out += '}';
    }
  });
}

void write_json_end(std::ostream& os) { os << "\n  ]\n}\n"; }

void write_json(std::ostream& os, const Table& t, const Attributes& attributes) {
  write_json_begin(os, t, attributes);
  write_json_rows(os, t, true);
  write_json_end(os);
}

void write_aligned(std::ostream& os, const Table& t, const std::vector<ShownColumn>& cols) {
  std::vector<std::string> titles;
  const auto cells = render(t, cols, titles);
  std::vector<std::size_t> width(cols.size());
  for (std::size_t i = 0; i < cols.size(); ++i) {
    width[i] = titles[i].size();
    for (const auto& s : cells[i]) width[i] = std::max(width[i], s.size());
  }
  for (std::size_t i = 0; i < cols.size(); ++i) os << (i ? "  " : "") << fmt::format("{:>{}}", titles[i], width[i]);
  os << '\n';
  for (std::size_t i = 0; i < cols.size(); ++i) os << (i ? "  " : "") << std::string(width[i], '-');
  os << '\n';
  const std::size_t n = t.rows();
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < cols.size(); ++i) os << (i ? "  " : "") << fmt::format("{:>{}}", cells[i][r], width[i]);
    os << '\n';
  }
}

void write_markdown(std::ostream& os, const Table& t, const std::vector<ShownColumn>& cols) {
  std::vector<std::string> titles;
  const auto cells = render(t, cols, titles);
  os << "|";
  for (const auto& s : titles) os << ' ' << s << " |";
  os << "\n|";
  for (std::size_t i = 0; i < cols.size(); ++i) os << "---:|";
  os << '\n';
  const std::size_t n = t.rows();
  for (std::size_t r = 0; r < n; ++r) {
    os << "|";
    for (std::size_t i = 0; i < cols.size(); ++i) os << ' ' << cells[i][r] << " |";
    os << '\n';
  }
}

void write_file_atomic(const std::string& path, const std::string& text) { write_text_output(path, text); }

}  // namespace cisa
