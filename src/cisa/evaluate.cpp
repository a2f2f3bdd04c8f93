#include "cisa/evaluate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include <set>

#include "cisa/errors.hpp"
#include "cisa/results.hpp"
#include "cisa/same_text.hpp"
#include "cisa/version.hpp"
#include "design/design_eval.hpp"
#include "model/pricing.hpp"

namespace cisa {

Shard parse_shard(const std::string& text) {
  Shard s;
  const auto slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    std::size_t u1 = 0, u2 = 0;
    s.index = std::stoi(text.substr(0, slash), &u1);
    s.count = std::stoi(text.substr(slash + 1), &u2);
    if (u1 != slash || u2 != text.size() - slash - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw InputError({"command line", 0, "--shard"}, "expected i/N (e.g. 0/4), got '" + text + "'");
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count)
    throw InputError({"command line", 0, "--shard"}, "need 0 <= i < N, got '" + text + "'");
  return s;
}

// CISA points with this model; other designs (issue 15) with src/design's traffic model.
Prediction predict_point(const Scenario& sc, const Point& p, const PointPricing& pr) {
  static const std::string kCisa = "cisa";
  return same_text(p.design, kCisa)
             ? predict(p, pr)
             : design::predict_design(p, pr, sc.designs.at(p.design), sc.design_equal_budget);
}

Table evaluate_scenario(const Scenario& sc, const std::function<void(std::size_t, std::size_t)>& progress,
                        Shard shard) {
  Pricer pricer(sc.cards, sc.impls, sc.basis);
  PointsTableBuilder b(sc.design_column);
  std::vector<Point> held;
  const bool lazy = sc.points.empty() && sc.point_count > 0;  // loaded with expand = false
  if (lazy) held = expand_points(sc.sweep);
  const std::vector<Point>& points = lazy ? held : sc.points;
  b.reserve(points.size());
  const std::size_t n = points.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (!shard.takes(i)) continue;
    const Point& p = points[i];
    const PointPricing& pr = pricer.for_point(p);
    b.add(static_cast<std::int64_t>(i), p, predict_point(sc, p, pr), pr.cisa[1].rates);
    if (progress && (i % 4096 == 4095 || i + 1 == n)) progress(i + 1, n);
  }
  return std::move(b.table());
}

std::size_t shard_rows(std::size_t points, Shard shard) {
  const auto idx = static_cast<std::size_t>(shard.index), count = static_cast<std::size_t>(shard.count);
  return points > idx ? (points - idx + count - 1) / count : 0;
}

StreamOptions stream_options() {
  StreamOptions o;
  o.chunk_rows = 16384;
  if (const char* e = std::getenv("CISA_CHUNK_ROWS"); e && std::atoll(e) > 0)
    o.chunk_rows = o.hold_rows = static_cast<std::size_t>(std::atoll(e));
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  o.threads = std::min(hw, 16u);
  if (const char* e = std::getenv("CISA_THREADS"); e && std::atoi(e) > 0)
    o.threads = static_cast<unsigned>(std::min(std::atoi(e), 256));
  return o;
}

namespace {

// Pricings of the sweep's (hardware, dense_impl, cisa_impl) triples, priced before any thread
// starts: workers only read them.
class PricingTable {
 public:
  explicit PricingTable(const Scenario& sc) : pricer_(sc.cards, sc.impls, sc.basis) {
    for (const Point& p : sc.sweep.impl_triples()) entries_.push_back({p.hardware, p.dense_impl, p.cisa_impl, &pricer_.for_point(p)});
  }
  const PointPricing& find(const Point& p) const {
    for (const auto& e : entries_)
      if (e.hardware == p.hardware && e.dense == p.dense_impl && e.cisa == p.cisa_impl) return *e.pricing;
    throw std::logic_error("no pricing for " + p.hardware + "/" + p.dense_impl + "/" + p.cisa_impl);
  }
  Pricer& pricer() { return pricer_; }
  struct Entry {
    std::string hardware, dense, cisa;
    const PointPricing* pricing;
  };
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  Pricer pricer_;
  std::vector<Entry> entries_;
};

}  // namespace

namespace {

// Threads that evaluate a chunk's rows with the calling thread: blocks of rows handed out one at
// a time (a thread that the sink or another process delays takes fewer), started once a run.
class ChunkPool {
 public:
  using Work = std::function<void(std::size_t, std::size_t)>;  // rows [lo, hi)
  explicit ChunkPool(unsigned helpers) {
    for (unsigned k = 0; k < helpers; ++k) threads_.emplace_back([this] { loop(); });
  }
  ~ChunkPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  ChunkPool(const ChunkPool&) = delete;
  ChunkPool& operator=(const ChunkPool&) = delete;

  // Hands rows [0, rows) out in blocks of `block` to the helpers; `before` runs on the calling
  // thread first (while the helpers work), then it takes blocks too. Returns when every block is
  // done; rethrows the first exception of `work` (or of `before`).
  void run(std::size_t rows, std::size_t block, const Work& work,
           const std::function<void()>& before) {
    Job job{&work, rows, block, (rows + block - 1) / block, 0};
    {
      std::lock_guard<std::mutex> lock(mu_);
      job.generation = ++generation_;
      job_ = job;
      done_ = 0;
      failed_ = nullptr;
      next_.store(job.generation << 32);
    }
    cv_.notify_all();
    std::exception_ptr before_failed;
    try {
      if (before) before();
    } catch (...) {
      before_failed = std::current_exception();
    }
    take(job);
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return done_ == job.blocks; });
    job_.work = nullptr;
    if (failed_) std::rethrow_exception(failed_);
    if (before_failed) std::rethrow_exception(before_failed);
  }

 private:
  struct Job {
    const Work* work = nullptr;
    std::size_t rows = 0, block = 1, blocks = 0;
    std::uint64_t generation = 0;
  };
  // Takes blocks of `job` until none is left. next_ holds the job's generation with the next block,
  // so a helper that wakes late never takes a block of a later job with this one's work.
  void take(const Job& job) {
    std::size_t finished = 0;
    for (;;) {
      std::uint64_t cur = next_.load();
      do {
        if ((cur >> 32) != job.generation || (cur & 0xffffffffULL) >= job.blocks) goto out;
      } while (!next_.compare_exchange_weak(cur, cur + 1));
      const std::size_t b = static_cast<std::size_t>(cur & 0xffffffffULL);
      try {
        (*job.work)(b * job.block, std::min(job.rows, (b + 1) * job.block));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu_);
        if (!failed_) failed_ = std::current_exception();
      }
      ++finished;
    }
  out:
    if (finished) {
      std::lock_guard<std::mutex> lock(mu_);
      done_ += finished;
      if (done_ == job.blocks) done_cv_.notify_all();
    }
  }
  void loop() {
    std::uint64_t seen = 0;
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || (generation_ != seen && job_.work); });
        if (stop_) return;
        seen = generation_;
        job = job_;
      }
      take(job);
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  Job job_;
  std::size_t done_ = 0;
  std::atomic<std::uint64_t> next_{0};
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr failed_;
};

}  // namespace

namespace {

// The sink on a thread of its own, given chunks in order: evaluation goes on while it writes, up to
// the builders there are, instead of waiting for each chunk's write before the next chunk starts
// (on 2 cores the writes' serial parts then left a core idle). A failure of the sink is rethrown by
// the next call; the chunks after it are not written.
class SinkThread {
 public:
  explicit SinkThread(const std::function<void(const Table&)>& sink)
      : sink_(sink), thread_([this] { loop(); }) {}
  ~SinkThread() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  SinkThread(const SinkThread&) = delete;
  SinkThread& operator=(const SinkThread&) = delete;

  void push(const Table& chunk) {
    std::lock_guard<std::mutex> lock(mu_);
    rethrow();
    queue_.push_back(&chunk);
    cv_.notify_all();
  }
  // Returns once `chunks` chunks are written (their tables can be reused).
  void wait_written(std::size_t chunks) {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return written_ >= chunks || failed_; });
    rethrow();
  }

 private:
  void rethrow() {
    if (failed_) std::rethrow_exception(failed_);
  }
  void loop() {
    for (;;) {
      const Table* t = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty() || failed_) return;  // stop_: the chunks queued are written first
        t = queue_.front();
      }
      std::exception_ptr failed;
      try {
        sink_(*t);
      } catch (...) {
        failed = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        queue_.pop_front();
        if (failed)
          failed_ = failed;
        else
          ++written_;
      }
      done_cv_.notify_all();
    }
  }

  const std::function<void(const Table&)>& sink_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::deque<const Table*> queue_;
  std::size_t written_ = 0;
  bool stop_ = false;
  std::exception_ptr failed_;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace

void evaluate_scenario_chunks(const Scenario& sc, const std::function<void(const Table&)>& sink,
                              const std::function<void(std::size_t, std::size_t)>& progress, Shard shard,
                              StreamOptions opt) {
  const PricingTable prices(sc);
  const std::size_t n = sc.point_count, chunk = std::max<std::size_t>(1, opt.chunk_rows);
  const unsigned threads = std::max(1u, opt.threads);
  // Two chunks: the sink writes the older one (on its own thread) while the next is evaluated. (A
  // third, session 15, let evaluation run further ahead of a slow sink; since chunks are encoded
  // by cell_deflate the sink takes ~6 ms a chunk to evaluation's ~16, and the third table's first
  // sizing, 17 MB zeroed and faulted in, cost more CPU than it saved.)
  // Two batches of points: the calling thread reads the next chunk's points from the sweep while
  // this one's are evaluated.
  constexpr std::size_t kBuilders = 2;
  PointsTableBuilder builders[kBuilders] = {PointsTableBuilder(sc.design_column),
                                            PointsTableBuilder(sc.design_column)};
  std::vector<Point> batch[2];
  std::vector<std::int64_t> index[2];
  Sweep::Cursor cur(sc.sweep);
  std::size_t i = 0;  // point index in the sweep
  bool more = true;
  auto fill = [&](std::vector<Point>& pts,
                  std::vector<std::int64_t>& idx) {  // the next chunk's points
    std::size_t rows = 0;
    while (more && rows < chunk) {
      if (pts.size() <= rows) {
        pts.emplace_back();
        idx.emplace_back();
      }
      if (!(more = cur.next(pts[rows]))) break;  // into the slot: its strings' storage is reused
      if (shard.takes(i)) idx[rows++] = static_cast<std::int64_t>(i);
      ++i;
    }
    return rows;
  };
  // Helpers only where a chunk has rows enough for them (the calling thread is one of `threads`).
  const unsigned helpers =
      static_cast<unsigned>(std::min<std::size_t>(threads - 1, (chunk + 1023) / 1024));
  std::unique_ptr<ChunkPool> pool;
  if (helpers) pool = std::make_unique<ChunkPool>(helpers);
  // After the pool: on an error the sink finishes the chunks given to it before the pool goes.
  std::unique_ptr<SinkThread> sinking;
  if (threads > 1) sinking = std::make_unique<SinkThread>(sink);
  std::size_t read_to[2] = {0, 0};  // the sweep's points read with each batch
  std::size_t rows = fill(batch[0], index[0]);
  read_to[0] = i;
  std::size_t chunks = 0;  // given to the sink
  for (std::size_t k = 0; rows > 0; ++k) {
    if (sinking && k >= kBuilders)
      sinking->wait_written(k - kBuilders + 1);  // chunk k - 2's table is free
    PointsTableBuilder& b = builders[k % kBuilders];
    const std::vector<Point>& pts = batch[k % 2];
    const std::vector<std::int64_t>& idx = index[k % 2];
    // A builder's first use: its columns' pages are touched on every thread.
    if (pool && k < kBuilders)
      pool->run(
          b.column_count(), 4,
          [&b, rows](std::size_t lo, std::size_t hi) { b.resize_columns(lo, hi, rows); }, nullptr);
    b.set_rows(rows);
    auto work = [&](std::size_t lo, std::size_t hi) {
      // Blocks of rows predicted, then stored column by column (PointsTableBuilder::put_rows).
      constexpr std::size_t kBlock = 64;
      thread_local std::vector<Prediction> preds(kBlock);
      const Rates* rates[kBlock];
      for (std::size_t r0 = lo; r0 < hi; r0 += kBlock) {
        const std::size_t m = std::min(kBlock, hi - r0);
        for (std::size_t j = 0; j < m; ++j) {
          const PointPricing& pr = prices.find(pts[r0 + j]);
          preds[j] = predict_point(sc, pts[r0 + j], pr);
          rates[j] = &pr.cisa[1].rates;
        }
        b.put_rows(r0, m, &idx[r0], &pts[r0], preds.data(), rates);
      }
    };
    std::size_t next_rows = 0;
    auto read_next = [&] {
      next_rows = fill(batch[(k + 1) % 2], index[(k + 1) % 2]);
      read_to[(k + 1) % 2] = i;
    };
    if (pool) {
      pool->run(rows, 512, work, read_next);
    } else {
      work(0, rows);
      read_next();
    }
    const Table& done = b.table();
    if (sinking)
      sinking->push(done);  // chunks reach the sink in order, one at a time
    else
      sink(done);
    ++chunks;
    if (progress) progress(std::min(read_to[k % 2], n), n);
    rows = next_rows;
  }
  if (sinking) sinking->wait_written(chunks);
}

std::map<std::string, std::size_t> text_column_widths(const Scenario& sc) {
  std::map<std::string, std::size_t> w;
  auto put = [&](const std::string& col, std::size_t len) { w[col] = std::max({w[col], len, std::size_t{1}}); };
  put("model", sc.sweep.base.model.size());
  for (const auto& [col, key] : std::vector<std::pair<std::string, std::string>>{
           {"hardware", "hardware"}, {"phase", "phase"}, {"kv_dtype", "kv_dtype"}, {"rep_dtype", "rep_dtype"},
           {"rep_kind", "rep_kind"}, {"score_agg", "score_agg"}, {"design", "design"}})
    for (const auto& v : sc.sweep.values_of(key)) put(col, v.size());
  const PricingTable prices(sc);
  for (const auto& e : prices.entries()) {
    for (const auto& d : e.pricing->dense) put("dense_impl", d[1].impl.size());
    put("cisa_impl", e.pricing->cisa[1].impl.size());
    put("pred_basis", to_string(e.pricing->cisa[1].rates.basis).size());
  }
  return w;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Attributes base_attributes(const std::string& command_line, const std::string& scenario_name, const std::string& file,
                           const std::string& text, const std::string& effective_yaml,
                           const std::vector<std::string>& overrides) {
  Attributes a;
  a["tool_version"] = tool_version();
  a["git_hash"] = git_hash();
  a["created_utc"] = utc_now_iso8601();
  a["command_line"] = command_line;
  a["scenario_name"] = scenario_name;
  a["scenario_file"] = file;
  a["scenario_yaml"] = text;
  a["scenario_effective_yaml"] = effective_yaml;
  std::string sets;
  for (const auto& s : overrides) sets += (sets.empty() ? "" : "\n") + s;
  a["scenario_overrides"] = sets;
  return a;
}

std::string implementation_figures(const ResolvedImpl& im) {
  std::string out = "# implementation " + im.name + "\n";
  for (const auto& u : im.used)
    out += fmt::format("{}: {{value: {:.6g}, label: {}, source: \"{}\"}}\n", u.field, u.figure.value,
                       to_string(u.figure.label()), u.figure.source);
  return out;
}

Attributes provenance(const Scenario& sc, const std::string& command_line, Shard shard) {
  Attributes a = base_attributes(command_line, sc.name, sc.file, sc.text, sc.effective_yaml, sc.overrides);
  a["basis"] = to_string(sc.basis);
  a["shard"] = std::to_string(shard.index) + "/" + std::to_string(shard.count);
  a["points_total"] = std::to_string(sc.point_count);
  Pricer pricer(sc.cards, sc.impls, sc.basis);
  std::string hw_yaml, hw_names;
  std::set<std::string> impl_names;
  for (const Point& p : sc.sweep.impl_triples()) {  // every (card, implementation) pair of the points
    const PointPricing& pr = pricer.for_point(p);
    for (const auto& d : pr.dense) impl_names.insert(p.hardware + "|" + d[1].impl);
    impl_names.insert(p.hardware + "|" + pr.cisa[1].impl);
  }
  for (const auto& key : impl_names) {
    const auto bar = key.find('|');
    const std::string card = key.substr(0, bar), impl = key.substr(bar + 1);
    a["implementation_figures." + card + "." + impl] = implementation_figures(pricer.resolved(card, impl));
    a["implementation_yaml." + impl] = sc.impls.at(impl).yaml;
  }
  for (const auto& [name, hw] : sc.gpus) {
    hw_yaml += "# --- " + name + "\n" + hw.yaml;
    hw_names += (hw_names.empty() ? "" : ",") + name;
    const Rates r = card_rates(hw, sc.basis);
    a["rates_source." + name] = r.source;
    if (sc.gpus.size() == 1) {
      a["hardware"] = name;
      a["hw_read_bw_tbs"] = fmt::format("{}", r.read_bw_Bps / 1e12);
      a["hw_bf16_tflops"] = fmt::format("{}", r.gemm_flops / 1e12);
      a["hw_launch_us"] = fmt::format("{}", r.launch_s * 1e6);
      a["hw_rates_source"] = r.source;
    }
  }
  if (sc.gpus.size() != 1) a["hardware"] = hw_names;
  if (sc.design_column) {  // issue 15: the designs pricing non-cisa points, as `cisa-sim designs` records them
    a["design_budget"] = sc.design_equal_budget ? "equal" : "own";
    for (const auto& [key, d] : sc.designs) {
      a["design_source." + d.name] = d.source;
      a["design_file." + d.name] = key;
    }
  }
  a["hardware_yaml"] = hw_yaml;
  a["byte_convention"] = "per global-attention layer, per forward, whole batch; DRAM bytes after the L2 model";
  a["uncertainty"] =
      "_lo/_hi columns: every figure at the fast / slow end of its band (explicit range; MEAS: half the recorded "
      "spread, 3-15 %; PUB 10 %; XFER 20 %; EST 30 %), unknown L2 sharing shared / none";
  return a;
}

}  // namespace cisa
