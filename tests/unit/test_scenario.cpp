// Scenario loading: shipped files, sweeps, overrides, and errors that say where and what.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "catch.hpp"
#include "cisa/embedded.hpp"
#include "cisa/errors.hpp"
#include "cisa/presets.hpp"
#include "cisa/scenario.hpp"

using namespace cisa;
namespace fs = std::filesystem;

namespace {
std::string write_temp(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / "cisa_test_scenario";
  fs::create_directories(dir);
  const fs::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

// Loads and returns the InputError message ("" if it loaded).
std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    load_scenario(write_temp("s.yaml", text), sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const char* kBase =
    "name: t\nmodel: inkling_small\ntp: 8\nhardware: h200_sxm\n"
    "cisa: {budget: 4096, G: 16}\nworkload: {phase: terminal_prefill, context: 1M, batch: 2, prefill_tokens: 64}\n";
}  // namespace

TEST_CASE("shipped scenarios load and expand", "[scenario]") {
  for (const char* name : {"ultra_tp2_1m", "inkling_tp8_1m", "nano_tp1_1m", "budget_schedule", "ceilings_paper"}) {
    const Scenario sc = load_scenario(std::string(CISA_SOURCE_DIR) + "/scenarios/" + name + ".yaml", {});
    INFO(name);
    CHECK(sc.name == name);
    CHECK(!sc.points.empty());
    // The embedded copy is the same file.
    CHECK(embedded_text(std::string("scenarios/") + name + ".yaml").value() == sc.text);
  }
  const Scenario def = load_scenario("", {});
  CHECK(def.name == "ultra_tp2_1m");
  CHECK(def.points.front().geo.q_heads == 32);
  CHECK(def.points.front().geo.kv_heads == 1);
  // phase x budget x G = 2 x 2 x 4; decode collapses G to 1.
  CHECK(def.points.size() == 8 + 2);
  CHECK(def.duplicates_collapsed == 6);
}

TEST_CASE("budget schedule zips context and budget", "[scenario]") {
  const Scenario sc = load_scenario(std::string(CISA_SOURCE_DIR) + "/scenarios/budget_schedule.yaml", {});
  REQUIRE(sc.points.size() == 4 * 3);
  for (const auto& p : sc.points) {
    const auto want = p.work.context_tokens == 131072 ? 1024 : p.work.context_tokens == 262144 ? 2048 : 4096;
    CHECK(p.cisa.budget_chunks == want);
  }
}

TEST_CASE("per-rank geometry from presets, KV heads replicated beyond their count", "[scenario]") {
  const ModelPreset llama = model_preset("llama3_1_70b");
  CHECK(llama.per_rank(8).q_heads == 8);
  CHECK(llama.per_rank(8).kv_heads == 1);
  const ModelPreset ultra = model_preset("nemotron3_ultra");
  CHECK(ultra.per_rank(4).kv_heads == 1);  // 2 KV heads over 4 ranks: replicated
  CHECK(ultra.per_rank(4).q_heads == 16);
  CHECK_THROWS(ultra.per_rank(3));
}

TEST_CASE("--set overrides fields and sweeps", "[scenario]") {
  const Scenario sc = load_scenario(write_temp("o.yaml", kBase), {"cisa.budget=2048", "sweep.G=[1,4]", "workload.batch=3"});
  REQUIRE(sc.points.size() == 2);
  CHECK(sc.points[0].cisa.budget_chunks == 2048);
  CHECK(sc.points[0].work.batch == 3);
  CHECK(sc.points[1].cisa.qshare_g == 4);
  CHECK(contains(sc.effective_yaml, "2048"));
}

TEST_CASE("bad input names the file, line and field", "[scenario]") {
  std::string e = error_of(std::string(kBase) + "worklaod: 1\n");
  CHECK(contains(e, "s.yaml:7"));
  CHECK(contains(e, "unknown key 'worklaod'"));
  CHECK(contains(e, "did you mean 'workload'"));

  e = error_of("name: t\nmodel: inkling_small\nhardware: h200_sxm\ncisa: {budgett: 4096}\n");
  CHECK(contains(e, "s.yaml:4"));
  CHECK(contains(e, "cisa.budgett"));
  CHECK(contains(e, "did you mean 'budget'"));

  e = error_of("name: t\nmodel: [unclosed\n");
  CHECK(contains(e, "malformed YAML"));

  e = error_of(std::string(kBase) + "sweep: {G: [4, 128]}\n");
  CHECK(contains(e, "cisa.G"));
  CHECK(contains(e, "sweep.G[1]"));

  e = error_of("name: t\nmodel: inkling_small\ntp: 3\nhardware: h200_sxm\n");
  CHECK(contains(e, "s.yaml:3"));
  CHECK(contains(e, "'tp'"));

  e = error_of("name: t\nmodel: inkling_smal\nhardware: h200_sxm\n");
  CHECK(contains(e, "did you mean 'inkling_small'"));

  e = error_of("name: t\nmodel: inkling_small\nhardware: h200\n");
  CHECK(contains(e, "unknown GPU preset 'h200'"));

  e = error_of(std::string(kBase) + "sweep: {zip: {context: [1M, 2M], budget: [1]}}\n");
  CHECK(contains(e, "equal lengths"));

  e = error_of(kBase, {"cisa.bugdet=5"});
  CHECK(contains(e, "command line (--set cisa.bugdet)"));

  e = error_of(std::string(kBase) + "basis: speed_of_lite\n");
  CHECK(contains(e, "speed_of_light"));

  e = error_of("name: t\nmodel: inkling_small\nhardware: h200_sxm\nworkload: {context: -5}\n");
  CHECK(contains(e, "workload.context"));

  CHECK_THROWS_AS(load_scenario("/nonexistent/dir/x.yaml", {}), InputError);
}

TEST_CASE("a GPU preset can include a calibration file written by `cisa-sim calibrate`", "[scenario]") {
  std::string card;
  for (const char* k : {"read_bw_tbs", "write_bw_tbs", "copy_bw_tbs", "gemm_bf16_tflops", "launch_overhead_us",
                        "kernel_floor_us", "h2d_bw_gbs", "h2d_latency_us"})
    card += std::string("    ") + k + ": {value: 2.0, source: \"MEAS: test\"}\n";
  const std::string cal =
      write_temp("cal.yaml", "calibration:\n  card_name: testgpu\n  basis: test\n  card:\n" + card);
  const std::string gpu = write_temp("gpu.yaml",
                                     "name: testgpu\narch: hopper\nhbm_gb: 80\nhbm_bw_tbs: 3\nbf16_tflops: 900\nsms: 100\ncard: " + cal + "\n");
  const Scenario sc = load_scenario(write_temp("c.yaml", "name: t\nmodel: inkling_small\nhardware: " + gpu + "\n"), {});
  const Hardware& hw = sc.gpus.at("testgpu");
  CHECK(hw.has_card);
  CHECK(hw.card.read_bw_tbs.value == 2.0);
  CHECK(hw.card.read_bw_tbs.label() == Label::MEAS);
  CHECK(hw.yaml.find("calibration file") != std::string::npos);

  const std::string bad = write_temp("gpu_bad.yaml", "name: g\nhbm_gb: 80\nhbm_bw_tbs: 3\nbf16_tflops: 900\nsms: 100\ncard: /nope.yaml\n");
  const std::string e = error_of("name: t\nmodel: inkling_small\nhardware: " + bad + "\n");
  CHECK(contains(e, "gpu_bad.yaml:6"));
  CHECK(contains(e, "cannot load the calibration file"));
  // The old layout (kernel rates inside the GPU preset) is refused with where they went.
  const std::string old = write_temp("gpu_old.yaml", "name: g\nhbm_gb: 80\nhbm_bw_tbs: 3\nbf16_tflops: 900\nsms: 100\ncalibration: x.yaml\n");
  CHECK(contains(error_of("name: t\nmodel: inkling_small\nhardware: " + old + "\n"), "implementation profiles"));
}

TEST_CASE("large sweeps are checked on several threads: counts and the first bad point as before",
          "[scenario]") {
  // Session 16: sweeps of 65,536 tuples and more are checked in ranges on the run's threads
  // (all_tuples_valid), the serial walk then names the first bad tuple. 8 x 8 x 8 x 8 x 4 x 4.
  const std::string axes =
      "  context: [131072, 262144, 393216, 524288, 655360, 786432, 917504, CTX]\n"
      "  batch: [1, 2, 4, 8, 16, 32, 48, 64]\n"
      "  budget: [512, 1024, 1536, 2048, 2560, 3072, 3584, 4096]\n"
      "  G: [1, 2, 4, 8, 16, 32, 64, GG]\n"
      "  window: [0, 16, 32, 64]\n"
      "  prefill_tokens: [512, 1024, 2048, 4096]\n";
  auto scenario = [&](const std::string& phase, const std::string& ctx, const std::string& g) {
    std::string a = axes;
    a.replace(a.find("CTX"), 3, ctx);
    a.replace(a.find("GG"), 2, g);
    return "name: t\nmodel: inkling_small\ntp: 8\nhardware: h200_sxm\ncisa: {budget: 4096, G: 16}\n"
           "workload: {phase: " +
           phase + ", context: 1M, batch: 2, prefill_tokens: 64}\nsweep:\n" + a;
  };
  const char* old = std::getenv("CISA_THREADS");
  const std::string keep = old ? old : "";
  for (const char* threads : {"1", "2", "3", "7"}) {
    INFO(threads << " threads");
    ::setenv("CISA_THREADS", threads, 1);
    // Decode: G collapses to 1, 7 of 8 G values are duplicates.
    const Scenario sc =
        load_scenario(write_temp("big.yaml", scenario("decode", "1048576", "128")), {}, false);
    REQUIRE(sc.sweep.tuples() == 65536);
    std::size_t n = 0;
    Sweep::Cursor cur(sc.sweep);
    for (Point p; cur.next(p);) ++n;
    CHECK(sc.point_count == n);
    CHECK(n == 65536 / 8);
    CHECK(sc.duplicates_collapsed == 65536 - n);
    // G = 1024 > P = 512: first at G[7] with the first prefill size; then a context shorter than
    // P, in the last range only.
    CHECK(error_of(scenario("terminal_prefill", "1048576", "1024")) ==
          error_of(scenario("terminal_prefill", "1048576", "1024")));
    const std::string g = error_of(scenario("terminal_prefill", "1048576", "1024"));
    CHECK(contains(g,
                   "QShare G must be in [1, P = 512], got 1024 (in the sweep point "
                   "sweep.context[0] sweep.batch[0] "
                   "sweep.budget[0] sweep.G[7] sweep.window[0] sweep.prefill_tokens[0])"));
    const std::string c = error_of(scenario("terminal_prefill", "1024", "128"));
    CHECK(contains(
        c,
        "P = 2048 exceeds the context of 1024 (in the sweep point sweep.context[7] sweep.batch[0] "
        "sweep.budget[0] sweep.G[0] sweep.window[0] sweep.prefill_tokens[2])"));
  }
  if (old)
    ::setenv("CISA_THREADS", keep.c_str(), 1);
  else
    ::unsetenv("CISA_THREADS");
}
