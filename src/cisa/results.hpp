// The /points table: one row per evaluated point, columns with units (names are stable; the
// README's glossary and analysis/ use the same names).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/hardware.hpp"
#include "model/point.hpp"
#include "cisa/table.hpp"

namespace cisa {

class PointsTableBuilder {
 public:
  // design_column: a `design` text column after cisa_impl (scenarios that name a design, issue 15;
  // absent otherwise, so tables of scenarios without one keep their columns).
  explicit PointsTableBuilder(bool design_column = false);
  // `index` is the point's position in the scenario's full sweep (kept through --shard).
  void add(std::int64_t index, const Point& p, const Prediction& pred, const Rates& rates);
  // Row `row` (< rows() after set_rows) in place: threads may fill different rows of one chunk at
  // once. The measured columns are not touched (set_rows makes them NaN).
  void put(std::size_t row, std::int64_t index, const Point& p, const Prediction& pred, const Rates& rates);
  // Rows [row, row + n) at once (faster: see results.cpp); rates[k] of row + k.
  void put_rows(std::size_t row, std::size_t n, const std::int64_t* index, const Point* points,
                const Prediction* preds, const Rates* const* rates);
  void reserve(std::size_t rows);
  // Every column `rows` long (storage kept for reuse), the measured columns NaN. A table reused
  // this way must not have had its measured columns written through table().
  void set_rows(std::size_t rows);
  // Columns [first, last) `rows` long, so that threads can share a first set_rows: it touches
  // every page of the columns (~17 MB a 16,384-row chunk), and a page's first touch is slow.
  std::size_t column_count() const { return t_.columns().size(); }
  void resize_columns(std::size_t first, std::size_t last, std::size_t rows);
  Table& table();  // trimmed to the rows added

 private:
  void grow();
  void fill_unmeasured(std::size_t from, std::size_t to);
  void resize_all(std::size_t n);
  Table t_;
  std::size_t rows_ = 0, capacity_ = 0;
  std::size_t nan_rows_ = 0;  // set_rows made the measured columns NaN in [0, nan_rows_)
  struct Cols;
  std::shared_ptr<Cols> c_;
};

// Names of the measured-time columns (NaN until `--measure` fills them), in table order.
const std::vector<std::string>& measured_columns();
// Kernel components with pred_dram_bytes_<c> / pred_dram_write_bytes_<c> columns (ncu twins:
// analysis/ncu_points.py).
const std::vector<std::string>& dram_components();
// Predicted columns that have _lo / _hi twins (the uncertainty band), in table order.
const std::vector<std::string>& band_columns();
// The predicted column a measured column is compared with: meas_ms_attention_dense (this
// project's dense kernel) -> pred_ms_attention_dense_own, ...; else pred_<x>.
std::string predicted_twin(const std::string& meas);
// err_<x> = meas / pred - 1, in the same order as measured_columns().
const std::vector<std::string>& error_columns();

}  // namespace cisa
