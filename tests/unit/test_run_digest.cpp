// The run table's digest of a streamed sweep (src/cli/run_table.cpp RunDigest): the distinct
// values of the key columns, listed chunk by chunk. Session 22: values already listed are found in
// a 64-slot cache before the set; the lists must equal a plain set of every row's value,
// whatever the order, the chunks and the collisions in the cache, and stay bounded (kMaxDistinct).
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cli/run_table.hpp"

using namespace cisa;

namespace {

Table chunk_of(std::size_t row0, std::size_t n, std::size_t distinct) {
  Table t;
  auto& prefill = t.add_i64("prefill_tokens", "tokens", "cycles through `distinct` values");
  auto& window = t.add_i64("window_pages", "pages", "runs of 3, values revisited out of order");
  auto& overlap = t.add_f64("selection_overlap", "", "doubles, NaN and signed zeros among them");
  auto& phase = t.add_text("phase", "runs of two phases");
  for (std::size_t r = row0; r < row0 + n; ++r) {
    prefill.push_back(static_cast<std::int64_t>(512 * (1 + (r * 7919) % distinct)));
    window.push_back(static_cast<std::int64_t>(((r / 3) * 2654435761ULL) % 97));
    overlap.push_back(
        r % 11 == 0
            ? std::nan("")
            : (r % 11 == 1 ? -0.0 : (r % 11 == 2 ? 0.0 : 0.125 * static_cast<double>(r % 9))));
    phase.push_back((r / 5) % 2 ? "terminal_prefill" : "decode");
  }
  return t;
}

}  // namespace

TEST_CASE("the run digest lists every distinct key value, as a set of all rows would", "[cli]") {
  for (const std::size_t distinct : {3, 10, 64, 65, 500, 5000}) {
    const std::size_t rows = 20000;
    cli::RunDigest d(chunk_of(0, 0, distinct), rows, 40);  // streamed: head and tail shown
    std::set<std::string> want_prefill, want_window, want_overlap;
    for (std::size_t at = 0; at < rows;) {
      const std::size_t n = std::min<std::size_t>(rows - at, 777 + at % 1000);
      const Table c = chunk_of(at, n, distinct);
      d.add(c);
      for (std::size_t r = 0; r < n; ++r) {
        want_prefill.insert(c.find("prefill_tokens")->format_cell(r));
        want_window.insert(c.find("window_pages")->format_cell(r));
        want_overlap.insert(c.find("selection_overlap")->format_cell(r));
      }
      at += n;
    }
    INFO(distinct << " distinct prefill sizes");
    if (distinct <= cli::RunDigest::kMaxDistinct) {
      CHECK(d.distinct.at("prefill_tokens") == want_prefill);
    } else {
      CHECK(d.distinct.at("prefill_tokens").size() <= cli::RunDigest::kMaxDistinct);
      for (const auto& v : d.distinct.at("prefill_tokens")) CHECK(want_prefill.count(v) == 1);
    }
    CHECK(d.distinct.at("window_pages") == want_window);
    CHECK(d.distinct.at("selection_overlap").size() <= want_overlap.size());
    for (const auto& v : d.distinct.at("selection_overlap")) CHECK(want_overlap.count(v) == 1);
    CHECK(d.distinct.at("phase") == std::set<std::string>{"decode", "terminal_prefill"});
    CHECK(d.seen == rows);
  }
}
